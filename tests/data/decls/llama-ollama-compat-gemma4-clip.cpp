void handle_gemma4_clip(gguf_context * meta, ggml_context * ctx) {
    OLLAMA_COMPAT_LOG_INFO("%s: detected Ollama-format gemma4 GGUF used as mmproj; translating\n", __func__);

    gguf_set_val_str(meta, "general.architecture", "clip");

    const bool has_vision = any_tensor_with_prefix(ctx, "v.");
    const bool has_audio  = any_tensor_with_prefix(ctx, "a.");

    if (has_vision) {
        copy_u32_kv(meta, "gemma4.vision.block_count",                   "clip.vision.block_count");
        copy_u32_kv(meta, "gemma4.vision.embedding_length",              "clip.vision.embedding_length");
        copy_u32_kv(meta, "gemma4.vision.feed_forward_length",           "clip.vision.feed_forward_length");
        copy_u32_kv(meta, "gemma4.vision.attention.head_count",          "clip.vision.attention.head_count");
        copy_f32_kv(meta, "gemma4.vision.attention.layer_norm_epsilon",  "clip.vision.attention.layer_norm_epsilon");
        copy_u32_kv(meta, "gemma4.vision.patch_size",                    "clip.vision.patch_size");
        // gemma4 vision is fixed at 224x224 patches.
        inject_u32_if_missing(meta, "clip.vision.image_size", 224);
        // projection_dim = LM embedding length.
        copy_u32_kv(meta, "gemma4.embedding_length",                     "clip.vision.projection_dim");

        static const float kZeros[3] = {0.0f, 0.0f, 0.0f};
        static const float kOnes [3] = {1.0f, 1.0f, 1.0f};
        inject_f32_arr_if_missing(meta, "clip.vision.image_mean", kZeros, 3);
        inject_f32_arr_if_missing(meta, "clip.vision.image_std",  kOnes,  3);

        inject_bool_if_missing(meta, "clip.has_vision_encoder", true);
        gguf_set_val_str(meta, "clip.vision.projector_type", "gemma4v");

        // Metal IM2COL needs F32 patch_embd weights (same as other arches).
        promote_tensor_to_f32(meta, ctx, "v.patch_embd.weight");
    }

    if (has_audio) {
        // Audio (gemma4a — conformer encoder + audio multimodal embedder).
        copy_u32_kv(meta, "gemma4.audio.block_count",                   "clip.audio.block_count");
        copy_u32_kv(meta, "gemma4.audio.embedding_length",              "clip.audio.embedding_length");
        copy_u32_kv(meta, "gemma4.audio.feed_forward_length",           "clip.audio.feed_forward_length");
        copy_u32_kv(meta, "gemma4.audio.attention.head_count",          "clip.audio.attention.head_count");
        copy_f32_kv(meta, "gemma4.audio.attention.layer_norm_epsilon",  "clip.audio.attention.layer_norm_epsilon");
        // Defaults from Gemma 4 audio preprocessing.
        inject_u32_if_missing(meta, "clip.audio.num_mel_bins",   128);
        copy_u32_kv(meta, "gemma4.embedding_length", "clip.audio.projection_dim");

        inject_bool_if_missing(meta, "clip.has_audio_encoder", true);
        gguf_set_val_str(meta, "clip.audio.projector_type", "gemma4a");
    }
}
