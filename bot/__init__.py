"""llama-bot: keeps Ollama's carried llama.cpp and MLX patches applying across upstream bumps."""
