int llama_fit_params(int argc, char ** argv);

int main(int argc, char ** argv) {
    return llama_fit_params(argc, argv);
}
