"""What rounding the resident f32 solver's node rows to f32 does to K (session 36; an emulation in numpy, not a GPU run).

The resident f32 solver's true residual is taken in f64 but from the f32 node rows, so it converges to the
solution of the system whose d = deg/(1 − q) is rounded to f32. For a structure-only kernel (κv ≡ κe ≡ 1),
K(G, G′) = p×ᵀ x with (D× − (1−q)²·A×)… is nearly singular along the constant vector (its smallest
eigenvalue ~ q), so a relative change δ of d moves K by ~δ/q. This script solves both systems exactly (dense
f64) for two cycles and a few random graphs and prints the relative difference.

    python3 f32_d_rounding.py
"""
import numpy as np


def k_value(a1, a2, q, p=1.0, rounded=False):
    """GraphDot's marginalized kernel with κv ≡ κe ≡ 1: M x = d×, M = D× − A× (D× = d ⊗ d′), K = p×ᵀ x."""
    d1, d2 = a1.sum(1) / (1 - q), a2.sum(1) / (1 - q)
    if rounded:
        d1, d2 = d1.astype(np.float32).astype(np.float64), d2.astype(np.float32).astype(np.float64)
    dd = np.kron(d1, d2)
    m = np.diag(dd) - np.kron(a1, a2)
    x = np.linalg.solve(m, dd)
    return p * p * x.sum()


def cycle(n):
    a = np.zeros((n, n))
    for i in range(n):
        a[i, (i + 1) % n] = a[(i + 1) % n, i] = 1
    return a


def random_graph(rng, n):
    a = np.zeros((n, n))
    for i in range(1, n):
        j = rng.integers(i)
        a[i, j] = a[j, i] = 1
    for _ in range(n // 3):
        i, j = rng.integers(n, size=2)
        if i != j:
            a[i, j] = a[j, i] = 1
    return a


rng = np.random.default_rng(1)
for q in (0.0005, 0.002, 0.05):
    exact = k_value(cycle(6), cycle(5), q)
    off = k_value(cycle(6), cycle(5), q, rounded=True)
    rel = [abs(k_value(g, h, q, rounded=True) / k_value(g, h, q) - 1) for g, h in ((random_graph(rng, 12), random_graph(rng, 17)) for _ in range(20))]
    print(f"q = {q}: K(C6, C5) = {exact:.8f}, with d in f32 {off:.8f} ({off / exact - 1:+.1e}); 20 random pairs: median {np.median(rel):.1e}, max {max(rel):.1e}")
