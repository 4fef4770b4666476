int llama_quantize(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_quantize(argc, argv);
}
