"""Metrics of a set of scored samples (the ParEval / performance-aligned-LLM lineage).

- pass@k: the unbiased estimator 1 - C(n-c, k) / C(n, k) (Chen et al., 2021).
- speedup_n@k: the expected *maximum* speedup over k samples drawn without
  replacement from the n scored ones. With speedups sorted ascending
  s(1) <= ... <= s(n), the i-th is the maximum of a k-subset exactly when the other
  k-1 come from the i-1 below it, so E[max] = sum_i s(i) C(i-1, k-1) / C(n, k).
  (The public ParEval script takes the slowest of k for k > 1; this is the max.)
  Reported with failures counted as speedup 0, and conditional on correctness
  (over the ok samples only, with k capped at their number).
- efficiency_n@k: the same for efficiency = speedup / threads (speedup over the serial
  textbook baseline, so 1.0 at T threads means T times the baseline).
- expected speedup = speedup_n@1; fraction of OpenBLAS = GFLOPS / OpenBLAS GFLOPS
  at the same size and thread count on the same machine.

    >>> pass_at_k(n=4, c=2, k=2)
    0.8333333333333334
    >>> speedup_at_k([0.0, 1.0, 2.0, 3.0], k=2)
    2.3333333333333335
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples (of n, c correct) is correct."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def speedup_at_k(speedups: Sequence[float], k: int) -> float:
    """Expected maximum of k values drawn without replacement from `speedups`."""
    n = len(speedups)
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n (n={n}, k={k})")
    s = sorted(speedups)
    total = comb(n, k)
    return sum(s[i - 1] * comb(i - 1, k - 1) for i in range(k, n + 1)) / total


def summarize(results: Iterable, openblas_gflops: float | None = None, ks: Sequence[int] = (1, 5, 10)) -> dict:
    """The metrics.json fields for a list of EvalResult-like records (objects or dicts)."""
    rows = [r if isinstance(r, dict) else r.to_dict() for r in results]
    n = len(rows)
    ok = [r for r in rows if r["status"] == "ok"]
    gflops = [r["gflops"] for r in ok]
    speed_all = [r["speedup"] if r["status"] == "ok" and r.get("speedup") else 0.0 for r in rows]
    speed_ok = [r["speedup"] for r in ok if r.get("speedup")]
    eff_all = [s / (r.get("threads") or 1) for s, r in zip(speed_all, rows)]
    eff_ok = [r["speedup"] / (r.get("threads") or 1) for r in ok if r.get("speedup")]
    best = max(gflops) if gflops else None
    return {
        "n_samples": n,
        "status_counts": dict(Counter(r["status"] for r in rows)),
        "pass_at_1": pass_at_k(n, len(ok), 1) if n else None,
        "pass_at_k": {str(k): pass_at_k(n, len(ok), k) for k in ks if k <= n},
        "mean_gflops_ok": statistics.fmean(gflops) if gflops else None,
        "median_gflops_ok": statistics.median(gflops) if gflops else None,
        "best_gflops": best,
        "expected_speedup": speedup_at_k(speed_all, 1) if n else None,
        "expected_speedup_ok": statistics.fmean(speed_ok) if speed_ok else None,
        "speedup_n_at_k": {str(k): speedup_at_k(speed_all, k) for k in ks if k <= n},
        "speedup_n_at_k_ok": {str(k): speedup_at_k(speed_ok, min(k, len(speed_ok))) for k in ks} if speed_ok else {},
        "efficiency_n_at_k": {str(k): speedup_at_k(eff_all, k) for k in ks if k <= n},
        "efficiency_n_at_k_ok": {str(k): speedup_at_k(eff_ok, min(k, len(eff_ok))) for k in ks} if eff_ok else {},
        "openblas_gflops": openblas_gflops,
        "fraction_of_openblas_best": (best / openblas_gflops) if best and openblas_gflops else None,
    }
