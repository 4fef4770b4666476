"""A tiny llama-architecture model with random weights (seed 0), written with the `gguf` package of the
upstream tree at the probed ref (run as a script with that tree's gguf-py first on the path) and the
tokenizer of one of that tree's vocab files, so each ref reads a model its own writer made.

    python tinymodel.py OUT.gguf VOCAB.gguf
"""

from __future__ import annotations

import sys

# two heads of 32: a quantized KV cache (q8_0, q4_0: blocks of 32) divides the head, as Ollama's
# OLLAMA_KV_CACHE_TYPE asks of real models
EMBED, LAYERS, HEADS, FFN, CONTEXT = 64, 2, 2, 128, 512
ARCHITECTURE, SEED = "llama", 0


def main(out: str, vocab_path: str) -> None:
    import gguf  # the upstream tree's, from PYTHONPATH
    import numpy as np

    reader = gguf.GGUFReader(vocab_path)
    writer = gguf.GGUFWriter(out, ARCHITECTURE)
    n_vocab = 0
    for f in reader.fields.values():
        if not f.name.startswith("tokenizer."):
            continue
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            values = f.contents()
            writer.add_key_value(f.name, values, f.types[0], sub_type=f.types[-1])
            n_vocab = max(n_vocab, len(values)) if f.name == "tokenizer.ggml.tokens" else n_vocab
        else:
            writer.add_key_value(f.name, f.contents(), f.types[0])
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBED // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    # mean pooling, as the embedding models Ollama serves declare: the server started with --embedding
    # answers /v1/embeddings (a model without it has no OpenAI-compatible pooling)
    if hasattr(writer, "add_pooling_type"):  # a gguf-py older than pooling has no embeddings to serve
        writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    rng = np.random.default_rng(SEED)

    def tensor(name: str, *shape: int) -> None:
        writer.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    tensor("token_embd.weight", n_vocab, EMBED)
    writer.add_tensor("output_norm.weight", np.ones(EMBED, dtype=np.float32))
    tensor("output.weight", n_vocab, EMBED)
    for i in range(LAYERS):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(EMBED, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(EMBED, dtype=np.float32))
        for part in ("attn_q", "attn_k", "attn_v", "attn_output"):
            tensor(f"blk.{i}.{part}.weight", EMBED, EMBED)
        tensor(f"blk.{i}.ffn_gate.weight", FFN, EMBED)
        tensor(f"blk.{i}.ffn_up.weight", FFN, EMBED)
        tensor(f"blk.{i}.ffn_down.weight", EMBED, FFN)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
