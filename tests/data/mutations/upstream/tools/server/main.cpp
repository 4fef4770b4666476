int llama_server(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_server(argc, argv);
}
