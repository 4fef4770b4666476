"""Ollama's build: CMake presets, what each Dockerfile stage copies and runs, and whether the carried
patches reach every build. Imports bot.config and below."""
