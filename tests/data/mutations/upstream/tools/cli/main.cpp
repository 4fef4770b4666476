int llama_cli(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_cli(argc, argv);
}
