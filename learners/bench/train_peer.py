"""The PyTorch side of `clues-lab bench --train` (carried in the binary, written beside its
inputs): `make DIR` writes a BERT-base-shaped BertForQuestionAnswering with random weights
(transformers' own initialisation, seed 0) as config.json and model.safetensors, which both
sides load; `time DIR` times fine-tuning updates of it (AdamW, the gradient clipped at 1, as
clues-lab's loop does) and prints milliseconds per update, split into forward, backward and
optimiser step, as one JSON line."""

import argparse
import json
import time

import torch
from transformers import BertConfig, BertForQuestionAnswering


def make(d):
    torch.manual_seed(0)
    BertForQuestionAnswering(BertConfig()).save_pretrained(d, safe_serialization=True)


def run(a):
    """Times `a.updates` updates after a warm-up one (the arguments as parsed, so that a new one
    cannot be dropped between the parser and here, as `--device` once was)."""
    d, batch, length, device = a.dir, a.batch, a.length, a.device
    torch.set_num_threads(a.threads)
    m = BertForQuestionAnswering.from_pretrained(d).to(device)
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=3e-5, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1000, m.config.vocab_size, (batch, length), generator=g).to(device)
    starts = torch.randint(0, length, (batch,), generator=g).to(device)
    ends = torch.randint(0, length, (batch,), generator=g).to(device)
    mask = torch.ones(batch, length, dtype=torch.long, device=device)
    types = torch.zeros(batch, length, dtype=torch.long, device=device)

    def done():
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    times = []
    for i in range(a.updates + 1):
        t0 = done()
        loss = m(input_ids=ids, attention_mask=mask, token_type_ids=types,
                 start_positions=starts, end_positions=ends).loss
        t1 = done()
        loss.backward()
        t2 = done()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        t3 = done()
        if i > 0:  # the first update warms up (allocations, thread pools)
            times.append([1000 * (t1 - t0), 1000 * (t2 - t1), 1000 * (t3 - t2)])
    print(json.dumps({"updates": times, "torch": torch.__version__}))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["make", "time"])
    p.add_argument("dir")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--length", type=int, default=128)
    p.add_argument("--updates", type=int, default=3)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    a = p.parse_args()
    if a.what == "make":
        make(a.dir)
    else:
        run(a)
