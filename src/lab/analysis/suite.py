"""The suite table: every arm's metrics per (problem, mode), side by side, and where training helped.

    from lab.analysis.suite import write_suite_summary
    summary = write_suite_summary("results/suite")   # -> results/suite/metrics.json

Reads each finished suite experiment under `results_dir` (a metrics.json with `rows`,
lab.analysis.experiments.evaluate_policy) and its samples, and writes one file:

- rows: one per arm x problem x mode, with pass_at_1, pass_at_k, expected_speedup,
  speedup_n_at_k, efficiency_n_at_k (keyed by k), distinct ok technique sets, and the
  median and best rate of ok kernels in the problem's unit;
- by_mode: per arm, the means over the problems of each execution model;
- versus_base: per trained arm and (problem, mode), the difference in expected speedup
  (the mean speedup of a sample, failures counted as 0) with its 95% bootstrap interval
  (scipy.stats.bootstrap, the two arms' samples resampled independently), and two
  verdicts, `better` / `worse` / `no clear difference`: `verdict`, whether that one
  interval excludes 0 (exploratory: with 16 cells an arm gets about one by chance), and
  `verdict_holm`, the same question for the arm's cells as a family (Holm's step-down
  procedure at 5% on bootstrap p-values), which is the one to state as a finding.

The base arm is the experiment of kind `baseline`. No `complete` key: this file is a
summary of experiments, not one (lab.analysis.experiments.load_results skips it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lab.files import read_json, read_jsonl, write_json

#: The per-row metrics carried into the summary.
ROW_METRICS = (
    "n_samples",
    "threads",
    "unit",
    "pass_at_1",
    "pass_at_k",
    "expected_speedup",
    "speedup_n_at_k",
    "efficiency_n_at_k",
    "speedup_n_at_k_ok",
    "distinct_technique_sets_ok",
    "median_gflops_ok",
    "best_gflops",
    "status_counts",
)


def load_suite(results_dir: str | Path) -> dict[str, dict]:
    """{arm: {"config", "metrics", "samples"}} for every finished suite experiment under results_dir."""
    out = {}
    for path in sorted(Path(results_dir).glob("*/metrics.json")):
        metrics = read_json(path)
        if not (metrics.get("complete") and "rows" in metrics):
            continue
        folder = path.parent
        out[folder.name] = {
            "config": read_json(folder / "config.json"),
            "metrics": metrics,
            "samples": read_jsonl(folder / "samples.jsonl"),
        }
    return out


def _speedups(samples: list[dict], problem: str, mode: str) -> np.ndarray:
    """Each sample's speedup (0 unless ok) for one (problem, mode); samples carry their mode."""
    return np.array(
        [
            (s.get("speedup") or 0.0) if s["status"] == "ok" else 0.0
            for s in samples
            if s["problem"] == problem and (s.get("mode") or mode) == mode
        ],
        dtype=float,
    )


def difference_ci(trained: np.ndarray, base: np.ndarray, seed: int = 0) -> tuple[float, float, float]:
    """Mean(trained) - mean(base) and its 95% percentile-bootstrap interval (independent samples).
    Degenerate samples (no spread at all) give the point difference as both ends."""
    diff, lo, hi, _ = difference_test(trained, base, seed)
    return diff, lo, hi


def difference_test(trained: np.ndarray, base: np.ndarray, seed: int = 0) -> tuple[float, float, float, float]:
    """difference_ci plus a two-sided bootstrap p-value: twice the smaller share of resampled
    differences on either side of 0 (1.0 for degenerate samples whose difference is 0)."""
    from scipy.stats import bootstrap

    diff = float(trained.mean() - base.mean())
    if len(trained) < 2 or len(base) < 2 or (np.ptp(trained) == 0 and np.ptp(base) == 0):
        return diff, diff, diff, 1.0 if diff == 0 else 0.0
    res = bootstrap(
        (trained, base),
        lambda a, b, axis=-1: a.mean(axis=axis) - b.mean(axis=axis),
        n_resamples=4000,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(seed),
        vectorized=True,
    )
    dist = res.bootstrap_distribution
    p = min(1.0, 2 * min(float(np.mean(dist <= 0)), float(np.mean(dist >= 0))))
    return diff, float(res.confidence_interval.low), float(res.confidence_interval.high), p


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


def verdict(lo: float, hi: float) -> str:
    if lo > 0:
        return "better"
    if hi < 0:
        return "worse"
    return "no clear difference"


def suite_summary(results_dir: str | Path) -> dict:
    """The summary described in the module docstring (empty `rows` when nothing is finished)."""
    arms = load_suite(results_dir)
    base = next((a for a, r in arms.items() if r["config"].get("kind") == "baseline"), None)
    rows = []
    for arm, res in arms.items():
        for row in res["metrics"]["rows"]:
            rows.append(
                {"arm": arm, "problem": row["problem"], "mode": row["mode"]} | {k: row.get(k) for k in ROW_METRICS}
            )
    versus = {}
    if base is not None:
        for arm, res in arms.items():
            if arm == base:
                continue
            entries = []
            for row in res["metrics"]["rows"]:
                p, m = row["problem"], row["mode"]
                a, b = _speedups(res["samples"], p, m), _speedups(arms[base]["samples"], p, m)
                if not len(a) or not len(b):
                    continue
                diff, lo, hi, p_value = difference_test(a, b)
                entries.append(
                    {
                        "problem": p,
                        "mode": m,
                        "base_expected_speedup": float(b.mean()),
                        "expected_speedup": float(a.mean()),
                        "difference": diff,
                        "difference_ci": [lo, hi],
                        "p_value": p_value,
                        "verdict": verdict(lo, hi),
                    }
                )
            for e, rejected in zip(entries, holm([e["p_value"] for e in entries])):
                e["verdict_holm"] = (
                    ("better" if e["difference"] > 0 else "worse") if rejected else "no clear difference"
                )
            versus[arm] = entries
    return {
        "base": base,
        "arms": list(arms),
        "rows": rows,
        "by_mode": {arm: res["metrics"]["by_mode"] for arm, res in arms.items()},
        "versus_base": versus,
        "verdicts": {arm: _count(entries, "verdict") for arm, entries in versus.items()},
        "verdicts_holm": {arm: _count(entries, "verdict_holm") for arm, entries in versus.items()},
        "machine": sorted({res["metrics"].get("machine") for res in arms.values() if res["metrics"].get("machine")}),
        "host": sorted({h for res in arms.values() for h in res["metrics"].get("host", [])}),
    }


def _count(entries: list[dict], key: str) -> dict[str, int]:
    out = {"better": 0, "worse": 0, "no clear difference": 0}
    for e in entries:
        out[e[key]] += 1
    return out


def write_suite_summary(results_dir: str | Path) -> dict:
    """suite_summary(results_dir), written to <results_dir>/metrics.json."""
    summary = suite_summary(results_dir)
    write_json(Path(results_dir) / "metrics.json", summary)
    return summary


def table_rows(summary: dict) -> list[dict]:
    """One row per (problem, mode): each arm's pass@1 and expected speedup, and each trained arm's
    verdict against the base (for a pandas table in notebooks and the README)."""
    out: dict[tuple, dict] = {}
    for r in summary["rows"]:
        row = out.setdefault((r["problem"], r["mode"]), {"problem": r["problem"], "mode": r["mode"]})
        row[f"{r['arm']} pass@1"] = r["pass_at_1"]
        row[f"{r['arm']} E[speedup]"] = r["expected_speedup"]
    for arm, entries in summary["versus_base"].items():
        for e in entries:
            lo, hi = e["difference_ci"]
            out[(e["problem"], e["mode"])][f"{arm} vs base"] = f"{e['difference']:+.2f} [{lo:+.2f}, {hi:+.2f}]"
            out[(e["problem"], e["mode"])][f"{arm} (Holm)"] = e["verdict_holm"]
    return list(out.values())


def mode_table(summary: dict) -> list[dict]:
    """Per arm and mode: the suite means (pass@1, expected speedup, speedup_n@k, efficiency_n@k)."""
    out = []
    for arm, modes in summary["by_mode"].items():
        for mode, m in modes.items():
            row = {"arm": arm, "mode": mode, "problems": m["problems"], "pass@1": m["pass_at_1"]}
            row["E[speedup]"] = m["expected_speedup"]
            for k, v in (m.get("speedup_n_at_k") or {}).items():
                row[f"speedup_n@{k}"] = v
            for k, v in (m.get("efficiency_n_at_k") or {}).items():
                row[f"efficiency_n@{k}"] = v
            out.append(row)
    return out
