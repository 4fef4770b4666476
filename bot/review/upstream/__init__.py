"""The upstream producer model: what llama.cpp's tree at one ref produces of what Ollama relies on (routes,
request and response fields, flags, environment, print statements, CMake names), found by content, and its
join with the contract inventory (`join.resolve`). The one git reader is `tree.read_tree`."""
