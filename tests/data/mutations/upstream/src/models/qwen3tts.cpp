#include "models.h"

// llama_model_qwen3tts reuses llama_model_qwen3vl's hparams/tensors/graph logic
