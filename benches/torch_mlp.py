"""The MLP of `benches/benches/mlp.rs` in PyTorch, to time both in the same window.

Batch 64, input 256, hidden 256 (tanh), output 1, mean squared error, with the same
deterministic weights and data; one thread, as the criterion runs use. Prints the median and
the minimum of the loss alone (under `no_grad`) and of the loss and its gradient (gradients
zeroed first, as the Rust bench does), in f64 and f32, each over 15 rounds of 200 calls.

    python3 benches/torch_mlp.py          # needs torch (2.5 was measured) and numpy
"""

import statistics
import time

import numpy as np
import torch

BATCH, INPUT, HIDDEN = 64, 256, 256


def filled(rows, cols, seed, scale, dtype):
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    values = scale * np.sin((i * 31 + j * 17 + seed) * 0.618)
    return torch.tensor(values, dtype=dtype)


def timed(step, rounds=15, calls=200):
    for _ in range(calls):
        step()
    per_call = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            step()
        per_call.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(per_call), min(per_call)


def bench(dtype, name):
    x = filled(BATCH, INPUT, 3, 1.0, dtype)
    y = filled(BATCH, 1, 4, 1.0, dtype)
    w1 = filled(INPUT, HIDDEN, 1, 1.0 / INPUT**0.5, dtype).requires_grad_()
    b1 = torch.full((HIDDEN,), 0.01, dtype=dtype, requires_grad=True)
    w2 = filled(HIDDEN, 1, 2, 1.0 / HIDDEN**0.5, dtype).requires_grad_()
    b2 = torch.zeros(1, dtype=dtype, requires_grad=True)
    params = [w1, b1, w2, b2]

    def loss():
        h = torch.tanh(x @ w1 + b1)
        return ((h @ w2 + b2 - y) ** 2).mean()

    def loss_only():
        with torch.no_grad():
            return loss().item()

    def loss_and_grad():
        for p in params:
            p.grad = None
        value = loss()
        value.backward()
        return value.item()

    l_med, l_min = timed(loss_only)
    g_med, g_min = timed(loss_and_grad)
    print(
        f"{name}: loss {l_med:.1f} µs (min {l_min:.1f}), "
        f"loss + grad {g_med:.1f} µs (min {g_min:.1f}), ratio {g_med / l_med:.2f}"
    )


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread")
    bench(torch.float64, "f64")
    bench(torch.float32, "f32")
