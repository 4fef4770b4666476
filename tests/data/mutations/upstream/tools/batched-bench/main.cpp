int llama_batched_bench(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_batched_bench(argc, argv);
}
