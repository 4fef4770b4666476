"""What Ollama's tree does with a pin: the code that compiles against it (other pins, Go bindings), its
vendored copies and its 'Before merging' steps. Imports bot.review and below."""
