"""llama-bot: keeps Ollama's carried llama.cpp and MLX patches applying across upstream bumps.

One package per concern, layered: a package imports only from those below it, bottom first `model`,
`times`, `commands` (the modules here that span all), `child`, `lang`, `repos`, `patches`, `config`,
`decisions`, `stores`, `build`, `review`, `ollama`, `engine`, `render`, `gh`, `worker`, `handlers/`,
`service`, `cli`; tests/test_layout.py holds that order (LAYERS) and fails on an import against it.
"""
