"""The source languages: tree-sitter for CMake, C/C++ and Go, every query declared at import, and what
C/C++ and CMake text says. Imports nothing of the bot."""
