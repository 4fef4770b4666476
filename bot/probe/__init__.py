"""The runtime contract probe: llama-server built at two refs and spoken to as Ollama does."""
