"""The Python peer of `clues-lab bench`: the same model track (tokenization, windows, batches
sorted by length and padded per batch, span decoding) with the PyPI package tokenizers, and the
model run by onnxruntime (--engine ort: model.onnx) or by Hugging Face transformers on PyTorch
(--engine torch: the folder's model.safetensors and config.json, as a researcher would run it),
timed the same way. Prints {"seconds": best} and writes one JSON list of spans per input line
to --out."""

import argparse
import json
import os
import time

import numpy as np
from tokenizers import Tokenizer


class TorchSession:
    """BertForQuestionAnswering in inference mode, answering as an ONNX Runtime session does."""

    def __init__(self, model_dir, threads, device):
        import torch
        from transformers import AutoModelForQuestionAnswering

        torch.set_num_threads(threads)
        self.torch, self.device = torch, device
        self.model = AutoModelForQuestionAnswering.from_pretrained(model_dir).eval().to(device)

    def run(self, names, inputs):
        t = {k: self.torch.from_numpy(v).to(self.device) for k, v in inputs.items()}
        with self.torch.inference_mode():
            out = self.model(**t)
        return [out.start_logits.float().cpu().numpy(), out.end_logits.float().cpu().numpy()]


def settings(model_dir):
    d = dict(max_answer_tokens=30, max_spans=4, null_threshold=0.0, max_seq_len=256,
             doc_stride=128, max_question_tokens=64, top_n=20, batch_size=32)
    path = os.path.join(model_dir, "decoding.json")
    if os.path.exists(path):
        with open(path) as f:
            d.update(json.load(f))
    return d


def tokens(tok, text):
    enc = tok.encode(text, add_special_tokens=False)
    return list(zip(enc.ids, enc.offsets))


def features(item, q, c, frame, d):
    """One input per context window, framed by the tokenizer's special tokens as the Rust side
    reads them from its post-processor (--frame)."""
    q = q[: d["max_question_tokens"]]
    specials = len(frame["before"]) + len(frame["between"]) + len(frame["after"])
    room = max(d["max_seq_len"] - (len(q) + specials), 1)
    step = min(max(d["doc_stride"], 1), room)
    out, start = [], 0
    while True:
        end = min(start + room, len(c))
        ids, types, mp = [], [], []
        special = lambda part: [(ids.append(i), types.append(t), mp.append(None)) for i, t in part]
        special(frame["before"])
        for i, (a, b) in q:
            ids.append(i); types.append(frame["question_type"]); mp.append(("question", a, b))
        special(frame["between"])
        for i, (a, b) in c[start:end]:
            ids.append(i); types.append(frame["context_type"]); mp.append(("context", a, b))
        special(frame["after"])
        out.append((item, ids, types, mp))
        if end >= len(c):
            return out
        start += step


def best_positions(scores, allowed, n):
    return sorted(allowed, key=lambda p: (-scores[p], p))[:n]


SEG = {"question": 0, "context": 1}


def boundary(text, p):
    """Whether code point p of text lies between words (not inside a run of letters and digits)."""
    return p == 0 or p >= len(text) or not (text[p - 1].isalnum() and text[p].isalnum())


def one_of(feats, logits, question, context, ranges):
    """The best of the listed (in_question, start, end) ranges: start logit of the token holding
    its first character plus end logit of the token holding its last; ties: the earlier."""
    best = None
    for n, (in_q, cs, ce) in enumerate(ranges):
        seg = "question" if in_q else "context"
        score = np.float32(np.finfo(np.float32).min)
        for (_, ids, _, mp), (s, e) in zip(feats, logits):
            hold = lambda at: next((i for i in range(len(ids)) if mp[i] is not None and mp[i][0] == seg and mp[i][1] <= at < mp[i][2]), None)
            i, j = hold(cs), hold(ce - 1)
            if i is not None and j is not None and i <= j:
                score = max(score, np.float32(s[i] + e[j]))
        if best is None or score > best[1]:
            best = (n, score)
    in_q, cs, ce = ranges[best[0]]
    text = (question if in_q else context)[cs:ce]
    return [{"source": "question" if in_q else "context", "offset": cs, "length": ce - cs, "text": text}]


def decode(feats, logits, question, context, ranges, d):
    if ranges:
        return one_of(feats, logits, question, context, ranges)
    null = np.float32(np.inf)
    best = {}
    for (_, ids, _, mp), (s, e) in zip(feats, logits):
        null = min(null, np.float32(s[0] + e[0]))
        ctx = [i for i in range(len(ids)) if mp[i] is not None and mp[i][0] == "context"]
        starts = [i for i in ctx if boundary(context, mp[i][1])]
        ends = [i for i in ctx if boundary(context, mp[i][2])]
        for i in best_positions(s, starts, d["top_n"]):
            for j in best_positions(e, ends, d["top_n"]):
                si, sj = mp[i], mp[j]
                if si[0] != sj[0] or j < i or j - i + 1 > d["max_answer_tokens"]:
                    continue
                score = np.float32(s[i] + e[j])
                key = (SEG[si[0]], si[1], sj[2])
                if key not in best or score > best[key]:
                    best[key] = score
    thr = np.float32(null + np.float32(d["null_threshold"]))
    cands = sorted(((k, v) for k, v in best.items() if v > thr), key=lambda kv: (-kv[1], kv[0]))
    out = []
    for (seg, cs, ce), score in cands:
        if len(out) == d["max_spans"]:
            break
        text = (question if seg == 0 else context)[cs:ce]
        overlaps = any(p[0] == seg and cs < p[1] + p[2] and p[1] < ce for p in out)
        if overlaps or not text or any(p[3] == text for p in out):
            continue
        out.append((seg, cs, ce - cs, text))
    out.sort(key=lambda p: (p[0], p[1]))
    return [{"source": "question" if p[0] == 0 else "context", "offset": p[1], "length": p[2], "text": p[3]} for p in out]


def run(sess, tok, items, d, type_ids, frame):
    feats = []
    for n, (q, c, _) in enumerate(items):
        feats.extend(features(n, tokens(tok, q), tokens(tok, c), frame, d))
    order = sorted(range(len(feats)), key=lambda i: (len(feats[i][1]), i))
    logits = [None] * len(feats)
    for b in range(0, len(order), d["batch_size"]):
        chunk = order[b : b + d["batch_size"]]
        width = max(len(feats[i][1]) for i in chunk)
        ids = np.zeros((len(chunk), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for r, i in enumerate(chunk):
            f = feats[i]
            ids[r, : len(f[1])] = f[1]
            types[r, : len(f[1])] = f[2]
            mask[r, : len(f[1])] = 1
        inputs = {"input_ids": ids, "attention_mask": mask}
        if type_ids:
            inputs["token_type_ids"] = types
        start, end = sess.run(["start_logits", "end_logits"], inputs)
        for r, i in enumerate(chunk):
            n = len(feats[i][1])
            logits[i] = (start[r, :n], end[r, :n])
    by_item = [[] for _ in items]
    for i, f in enumerate(feats):
        by_item[f[0]].append(i)
    return [
        decode([feats[i] for i in idx], [logits[i] for i in idx], q, c, ranges, d)
        for idx, (q, c, ranges) in zip(by_item, items)
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--frame", required=True)
    ap.add_argument("--engine", choices=["ort", "torch"], default="ort")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = ap.parse_args()
    d = settings(a.model)
    with open(a.inputs) as f:
        items = [(r["question"], r["context"], r.get("one_of")) for r in map(json.loads, f)]
    # Loading the model and the tokenizer is outside the timed part, on both sides.
    if a.engine == "torch":
        sess, type_ids = TorchSession(a.model, a.threads, a.device), True
    else:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = a.threads
        providers = ["CPUExecutionProvider"]
        if a.device == "cuda":
            # The GPU wheel's CUDA/cuDNN libraries, as the Rust side preloads them.
            ort.preload_dylibs()
            providers = ["CUDAExecutionProvider"]
        sess = ort.InferenceSession(os.path.join(a.model, "model.onnx"), so, providers=providers)
        type_ids = any(i.name == "token_type_ids" for i in sess.get_inputs())
    tok = Tokenizer.from_file(os.path.join(a.model, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    best, preds = float("inf"), None
    for _ in range(max(a.repeat, 1)):
        started = time.perf_counter()
        preds = run(sess, tok, items, d, type_ids, json.loads(a.frame))
        best = min(best, time.perf_counter() - started)
    with open(a.out, "w") as f:
        for p in preds:
            f.write(json.dumps(p) + "\n")
    print(json.dumps({"seconds": best, "examples": len(items)}))


if __name__ == "__main__":
    main()
