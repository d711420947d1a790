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
  (lab.analysis.intervals: the trained arm's samples resampled by training seed), and two
  verdicts, `better` / `worse` / `no clear difference`: `verdict`, whether that one
  interval excludes 0 (exploratory: with 16 cells an arm gets about one by chance), and
  `verdict_holm`, the same question for the arm's cells as a family (Holm's step-down
  procedure at 5% on bootstrap p-values), which is the one to state as a finding.

The base arm is the experiment of kind `baseline`. No `complete` key: this file is a
summary of experiments, not one (lab.analysis.experiments.load_results skips it).
"""

from __future__ import annotations

from pathlib import Path

from lab.analysis.intervals import difference, holm, verdict
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


def _of(samples: list[dict], problem: str, mode: str) -> list[dict]:
    return [s for s in samples if s["problem"] == problem and s.get("mode") == mode]


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
                a, b = _of(res["samples"], p, m), _of(arms[base]["samples"], p, m)
                if not a or not b:
                    continue
                clusters = [s["seed"] for s in a] if res["config"].get("kind") == "grpo" else None
                d = difference(a, b, "expected_speedup", clusters_a=clusters)
                entries.append(
                    {
                        "problem": p,
                        "mode": m,
                        "base_expected_speedup": d["b"],
                        "expected_speedup": d["a"],
                        "difference": d["difference"],
                        "difference_ci": d["ci"],
                        "p_value": d["p_value"],
                        "verdict": verdict(d["ci"]),
                    }
                )
            for e, rejected in zip(entries, holm([e["p_value"] for e in entries])):
                e["verdict_holm"] = e["verdict"] if rejected else "no clear difference"
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
