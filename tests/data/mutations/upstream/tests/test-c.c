#include "llama.h"

int main(void) {}
