# A llama-architecture GGUF for the in-context tests and the icl benchmark: 2 layers of 64
# dimensions, random normal(0, 0.02) weights, a byte-level SentencePiece vocabulary (the 256
# byte tokens and a few words). Usage: python tiny_gguf.py OUT.gguf (needs numpy and gguf).
import sys, numpy as np, gguf
rng = np.random.default_rng(0)
n_embd, n_head, n_layer, n_ff = 64, 4, 2, 128
words = ["\u2581" + w for w in ["positive", "negative", "no", "answer", "Context", "Question", "Answer"]]
tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + words
types = [2, 3, 3] + [6] * 256 + [1] * len(words)
w = gguf.GGUFWriter(sys.argv[1], "llama")
w.add_name("clues-lab test: tiny random llama")
w.add_context_length(4096); w.add_embedding_length(n_embd); w.add_block_count(n_layer)
w.add_feed_forward_length(n_ff); w.add_head_count(n_head); w.add_head_count_kv(n_head)
w.add_rope_dimension_count(n_embd // n_head); w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model("llama"); w.add_token_list(tokens)
w.add_token_scores([0.0] * (3 + 256) + [-1.0] * len(words)); w.add_token_types(types)
w.add_bos_token_id(1); w.add_eos_token_id(2); w.add_unk_token_id(0)
w.add_add_bos_token(True); w.add_add_eos_token(False)
r = lambda *s: (rng.standard_normal(s) * 0.02).astype(np.float32)
ones = lambda n: np.ones(n, np.float32)
w.add_tensor("token_embd.weight", r(len(tokens), n_embd))
w.add_tensor("output_norm.weight", ones(n_embd))
w.add_tensor("output.weight", r(len(tokens), n_embd))
for i in range(n_layer):
    p = "blk.%d." % i
    w.add_tensor(p + "attn_norm.weight", ones(n_embd))
    for t in ["attn_q", "attn_k", "attn_v", "attn_output"]:
        w.add_tensor(p + t + ".weight", r(n_embd, n_embd))
    w.add_tensor(p + "ffn_norm.weight", ones(n_embd))
    w.add_tensor(p + "ffn_gate.weight", r(n_ff, n_embd))
    w.add_tensor(p + "ffn_up.weight", r(n_ff, n_embd))
    w.add_tensor(p + "ffn_down.weight", r(n_embd, n_ff))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
