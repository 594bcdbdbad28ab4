"""A small BERT checkpoint with random weights, as Hugging Face saves one (config.json and
model.safetensors, written here with numpy alone), for gpu-run.sh's CPU half in CI, where
there is no PyTorch to write the BERT-base one: 2 layers, hidden size 64, the vocabulary of
the packed tokenizer (30,522 ids), weights normal with SD 0.02 as BERT initialises them,
layer norms at 1 and 0. Usage: tiny_checkpoint.py DIR"""

import json
import os
import struct
import sys

import numpy as np

CONFIG = dict(model_type="bert", architectures=["BertForQuestionAnswering"], vocab_size=30522,
              hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
              max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12,
              hidden_act="gelu", pad_token_id=0)


def shapes(c):
    h, i = c["hidden_size"], c["intermediate_size"]
    out = [("embeddings.word_embeddings.weight", (c["vocab_size"], h)),
           ("embeddings.position_embeddings.weight", (c["max_position_embeddings"], h)),
           ("embeddings.token_type_embeddings.weight", (c["type_vocab_size"], h)),
           ("embeddings.LayerNorm.weight", (h,)), ("embeddings.LayerNorm.bias", (h,))]
    for n in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{n}"
        for proj in ("query", "key", "value"):
            out += [(f"{p}.attention.self.{proj}.weight", (h, h)), (f"{p}.attention.self.{proj}.bias", (h,))]
        out += [(f"{p}.attention.output.dense.weight", (h, h)), (f"{p}.attention.output.dense.bias", (h,)),
                (f"{p}.attention.output.LayerNorm.weight", (h,)), (f"{p}.attention.output.LayerNorm.bias", (h,)),
                (f"{p}.intermediate.dense.weight", (i, h)), (f"{p}.intermediate.dense.bias", (i,)),
                (f"{p}.output.dense.weight", (h, i)), (f"{p}.output.dense.bias", (h,)),
                (f"{p}.output.LayerNorm.weight", (h,)), (f"{p}.output.LayerNorm.bias", (h,))]
    return [(f"bert.{n}", s) for n, s in out] + [("qa_outputs.weight", (2, h)), ("qa_outputs.bias", (2,))]


def save_safetensors(path, tensors):
    """The safetensors layout: the header's length (u64, little-endian), the JSON header, the data."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors:
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = dict(dtype="F32", shape=list(a.shape), data_offsets=[offset, offset + len(data)])
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    tensors = []
    for name, shape in shapes(CONFIG):
        if name.endswith("LayerNorm.weight"):
            a = np.ones(shape)
        elif name.endswith("bias") or "LayerNorm" in name:
            a = np.zeros(shape)
        else:
            a = rng.normal(0.0, 0.02, shape)
        tensors.append((name, a))
    save_safetensors(os.path.join(out, "model.safetensors"), tensors)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    print(f"{out}: a BERT of {CONFIG['num_hidden_layers']} layers, hidden size {CONFIG['hidden_size']}, random weights")


if __name__ == "__main__":
    main()
