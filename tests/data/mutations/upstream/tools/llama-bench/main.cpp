int llama_bench(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_bench(argc, argv);
}
