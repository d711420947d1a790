"""Bootstrap intervals for the headline metrics, and for differences between arms.

    from lab.analysis.intervals import metric_intervals, difference
    cis = metric_intervals(samples, clusters=[s["seed"] for s in samples])
    cis["pass_at_1_ci"]                       # [lo, hi], 95%
    difference(trained, base, "expected_speedup", clusters_a=seeds)   # {"difference", "ci", "p_value"}

A sample is a scored completion (a samples.jsonl record: `status`, `gflops`, `speedup`).
The metrics are the ones of lab.analysis.metrics, as functions of the samples:
pass@1, the mean and median rate of ok kernels (`mean_gflops_ok`, `median_gflops_ok`, in
the problem's unit), the expected speedup (failures count 0) and speedup_n@k; and, for
technique-restricted prompts, the `compliance` of ok kernels (a sample's `compliant`).

Two resampling schemes, both percentile intervals:

- independent samples (`clusters=None`): one policy sampled with several seeds, as for the
  base policy: the samples are drawn with replacement;
- clustered samples (`clusters` = each sample's training seed): each training run is its
  own policy, so a seed's samples are not independent of each other, and an interval over
  samples alone would leave out the spread between runs. The resampling is two-stage:
  draw the seeds with replacement, then samples within each drawn seed. With 3 seeds the
  interval rests on only 10 distinct seed draws: it is wide, which is the honest answer
  for 3 runs.

The resampling is written here rather than taken from scipy.stats.bootstrap, which only
resamples independent observations: one loop serves both schemes, so the two arms of a
difference are resampled alike whatever their scheme (the independent scheme is the
one-cluster case).

A resample in which no kernel is ok has no mean or median ok rate; those resamples are left
out of the percentile (the share is small whenever pass@1 is not).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from lab.analysis.metrics import speedup_at_k

CONFIDENCE = 0.95
RESAMPLES = 2000
#: The metrics metric_intervals reports, and the @k of speedup_n_at_k it covers.
METRICS = ("pass_at_1", "mean_gflops_ok", "median_gflops_ok", "expected_speedup")
KS = (1, 5, 10)


class _Columns:
    """The numbers the statistics need, as arrays: ok, rate (nan unless ok), speedup (0 unless ok)."""

    def __init__(self, samples: Sequence[dict]):
        self.ok = np.array([s["status"] == "ok" for s in samples], dtype=bool)
        self.rate = np.array([s.get("gflops") if s["status"] == "ok" else np.nan for s in samples], dtype=float)
        self.speed = np.array([(s.get("speedup") or 0.0) if s["status"] == "ok" else 0.0 for s in samples], dtype=float)
        self.compliant = np.array([bool(s.get("compliant")) for s in samples], dtype=bool)


def _statistic(metric: str) -> Callable[[_Columns, np.ndarray], float]:
    """metric name -> f(columns, indices of a resample)."""
    if metric == "pass_at_1":
        return lambda c, i: float(c.ok[i].mean())
    if metric == "mean_gflops_ok":
        return lambda c, i: float(np.nanmean(c.rate[i])) if c.ok[i].any() else np.nan
    if metric == "median_gflops_ok":
        return lambda c, i: float(np.nanmedian(c.rate[i])) if c.ok[i].any() else np.nan
    if metric == "expected_speedup":
        return lambda c, i: float(c.speed[i].mean())
    if metric == "compliance":  # of the ok kernels of technique-restricted prompts
        return lambda c, i: float(c.compliant[i][c.ok[i]].mean()) if c.ok[i].any() else np.nan
    if metric == "compliant_expected_speedup":  # a kernel that broke its restriction counts 0
        return lambda c, i: float((c.speed[i] * c.compliant[i]).mean())
    if metric.startswith("speedup_n_at_"):
        k = int(metric.rsplit("_", 1)[1])
        return lambda c, i: speedup_at_k(c.speed[i].tolist(), k) if len(i) >= k else np.nan
    raise ValueError(
        f"unknown metric {metric!r}; known: {', '.join(METRICS)}, compliance, compliant_expected_speedup, "
        "speedup_n_at_<k>"
    )


def _cluster_draws(clusters: Sequence, rng: np.random.Generator, resamples: int) -> list[np.ndarray]:
    """Index arrays of two-stage resamples: clusters with replacement, then members of each."""
    labels = list(dict.fromkeys(clusters))
    members = {c: np.flatnonzero(np.asarray([x == c for x in clusters])) for c in labels}
    draws = []
    for _ in range(resamples):
        picked = rng.integers(len(labels), size=len(labels))
        draws.append(np.concatenate([rng.choice(members[labels[j]], size=len(members[labels[j]])) for j in picked]))
    return draws


def _draws(n: int, clusters: Sequence | None, seed: int, resamples: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if clusters is not None and len(set(clusters)) > 1:
        return _cluster_draws(clusters, rng, resamples)
    return [rng.integers(n, size=n) for _ in range(resamples)]


def _percentiles(values: Sequence[float]) -> list[float] | None:
    finite = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if not len(finite):
        return None
    tail = (1 - CONFIDENCE) / 2 * 100
    return [float(np.percentile(finite, tail)), float(np.percentile(finite, 100 - tail))]


def metric_values(samples: Sequence[dict], metrics: Sequence[str] = METRICS) -> dict[str, float | None]:
    """Each of `metrics` computed on all of `samples`, by the same statistics the intervals
    resample; None where it has no value (no samples, or no ok kernel for a rate)."""
    columns, everything = _Columns(samples), np.arange(len(samples))
    values = {m: _statistic(m)(columns, everything) if len(samples) else np.nan for m in metrics}
    return {m: float(v) if np.isfinite(v) else None for m, v in values.items()}


def metric_intervals(
    samples: Sequence[dict],
    clusters: Sequence | None = None,
    seed: int = 0,
    resamples: int = RESAMPLES,
    metrics: Sequence[str] = METRICS,
) -> dict[str, object]:
    """`<metric>_ci: [lo, hi]` for each of `metrics` (the headline METRICS, or others such as
    `compliance`), and `speedup_n_at_k_ci: {k: [lo, hi]}` (k in KS up to the number of
    samples); None where there is nothing to resample."""
    if len(samples) < 2:
        return {f"{m}_ci": None for m in metrics} | {"speedup_n_at_k_ci": {}}
    columns = _Columns(samples)
    draws = _draws(len(samples), clusters, seed, resamples)
    out: dict[str, object] = {}
    for metric in metrics:
        stat = _statistic(metric)
        out[f"{metric}_ci"] = _percentiles([stat(columns, i) for i in draws])
    out["speedup_n_at_k_ci"] = {
        str(k): _percentiles([_statistic(f"speedup_n_at_{k}")(columns, i) for i in draws])
        for k in KS
        if k <= len(samples)
    }
    return out


def difference(
    a: Sequence[dict],
    b: Sequence[dict],
    metric: str,
    clusters_a: Sequence | None = None,
    clusters_b: Sequence | None = None,
    seed: int = 0,
    resamples: int = RESAMPLES,
) -> dict[str, object]:
    """metric(a) - metric(b), its 95% interval (the two arms resampled independently, each by
    its own scheme) and a two-sided bootstrap p-value: twice the smaller share of resampled
    differences on either side of 0. Also the ratio a/b with its interval, where b > 0."""
    stat = _statistic(metric)
    ca, cb = _Columns(a), _Columns(b)
    point_a, point_b = stat(ca, np.arange(len(a))), stat(cb, np.arange(len(b)))
    da = _draws(len(a), clusters_a, seed, resamples)
    db = _draws(len(b), clusters_b, seed + 1, resamples)
    pairs = [(stat(ca, i), stat(cb, j)) for i, j in zip(da, db)]
    pairs = [(x, y) for x, y in pairs if np.isfinite(x) and np.isfinite(y)]
    diffs = np.asarray([x - y for x, y in pairs], dtype=float)
    ratios = [x / y for x, y in pairs if y > 0]
    if not len(diffs):
        p = None
    elif np.ptp(diffs) == 0:
        p = 1.0 if diffs[0] == 0 else 0.0
    else:
        p = min(1.0, 2 * min(float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))))
    finite = np.isfinite(point_a) and np.isfinite(point_b)
    return {
        "metric": metric,
        "a": point_a if np.isfinite(point_a) else None,
        "b": point_b if np.isfinite(point_b) else None,
        "difference": point_a - point_b if finite else None,
        "ci": _percentiles(diffs.tolist()),
        "p_value": p,
        "ratio": point_a / point_b if finite and point_b > 0 else None,
        "ratio_ci": _percentiles(ratios),
    }


def holm(p_values: list[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which of the hypotheses are rejected with the family-wise
    error rate held at alpha.

    >>> holm([0.01, 0.04, 0.03, 0.5])
    [True, False, False, False]
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        rejected[i] = True
    return rejected


def verdict(ci: Sequence[float] | None) -> str:
    """better / worse / no clear difference, from a difference's interval."""
    if ci is None:
        return "no clear difference"
    lo, hi = ci
    return "better" if lo > 0 else "worse" if hi < 0 else "no clear difference"
