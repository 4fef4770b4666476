int llama_completion(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_completion(argc, argv);
}
