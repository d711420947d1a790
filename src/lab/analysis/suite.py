"""The suite table: every arm's metrics per (problem, mode), side by side, and where training helped.

    from lab.analysis.suite import write_suite_summary
    summary = write_suite_summary("results/suite")   # -> results/suite/metrics.json

Reads each finished suite experiment under `results_dir` (a metrics.json with `rows`,
lab.pipeline.runner.evaluate_policy) and its samples, and writes one file:

- rows: one per arm x problem x mode, with pass_at_1, pass_at_k, expected_speedup,
  speedup_n_at_k, efficiency_n_at_k (keyed by k), distinct ok technique sets, and the
  median and best rate of ok kernels in the problem's unit;
- by_mode: per arm, the means over the problems of each execution model, with the 95%
  intervals of pass@1 and expected speedup over the mode's samples (`<metric>_ci`);
- versus_base: per trained arm and (problem, mode), the difference in expected speedup
  (the mean speedup of a sample, failures counted as 0) with its 95% bootstrap interval
  (lab.analysis.intervals: the trained arm's samples resampled by training seed), and two
  verdicts, `better` / `worse` / `no clear difference`: `verdict`, whether that one
  interval excludes 0 (exploratory: with 16 cells an arm gets about one by chance), and
  `verdict_holm`, the same question for the arm's cells as a family (Holm's step-down
  procedure at 5% on bootstrap p-values), which is the one to state as a finding;
- versus_base_by_mode: per trained arm and mode, the same difference for the mode's mean
  expected speedup over its problems, with the ratio trained / base and its interval, and
  the Holm verdict over the arm's modes: the suite's "does training help in this execution
  model" question.

Every evaluation samples the same number of completions per (problem, mode) and seed, so
the mean over a mode's samples is the mean over its problems, and one resample of the
mode's samples (training seeds as clusters for a trained arm: a seed is one policy for
every problem) gives its interval. Rows of a problem with an OpenBLAS reference (DGEMM)
carry it, measured in the same run at the row's thread count, and the best and median ok
kernel as a fraction of it.

The base arm is the experiment of kind `baseline`. No `complete` key: this file is a
summary of experiments, not one (lab.results.load_results skips it).
"""

from __future__ import annotations

from pathlib import Path

from lab.analysis.compare import held_text, interval_text, judge, number_text, ratio_text, table_text
from lab.analysis.intervals import difference, metric_intervals
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
    "pass_at_1_ci",
    "mean_gflops_ok_ci",
    "median_gflops_ok_ci",
    "expected_speedup_ci",
    "openblas_gflops",
    "fraction_of_openblas_best",
    "median_fraction_of_openblas",
    "median_fraction_of_openblas_ci",
    "truncation_rate",
    "seen_in_training",
)

#: The mode-level means that get an interval in by_mode.
MODE_INTERVALS = ("pass_at_1", "expected_speedup")


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


def _of_mode(samples: list[dict], mode: str) -> list[dict]:
    return [s for s in samples if s.get("mode") == mode]


def _entries(res: dict) -> set[tuple[str, str]]:
    return {(r["problem"], r["mode"]) for r in res["metrics"]["rows"]}


def _seeds(res: dict, samples: list[dict]) -> list | None:
    """The resampling clusters of a trained arm's samples (its training seeds); None for the base."""
    return [s["seed"] for s in samples] if res["config"].get("kind") == "grpo" else None


def _difference_entry(a: list[dict], b: list[dict], clusters: list | None) -> dict:
    d = difference(a, b, "expected_speedup", clusters_a=clusters)
    return {
        "base_expected_speedup": d["b"],
        "expected_speedup": d["a"],
        "difference": d["difference"],
        "difference_ci": d["ci"],
        "ratio": d["ratio"],
        "ratio_ci": d["ratio_ci"],
        "p_value": d["p_value"],
    }


def _by_mode(res: dict) -> dict[str, dict]:
    """The arm's by_mode means, each with the intervals of MODE_INTERVALS over the mode's samples."""
    out = {}
    for mode, means in res["metrics"]["by_mode"].items():
        samples = _of_mode(res["samples"], mode)
        cis = metric_intervals(samples, _seeds(res, samples))
        out[mode] = {**means, **{f"{m}_ci": cis[f"{m}_ci"] for m in MODE_INTERVALS}}
    return out


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
    versus, versus_mode = {}, {}
    if base is not None:
        for arm, res in arms.items():
            if arm == base:
                continue
            entries, modes = [], []
            for row in res["metrics"]["rows"]:
                p, m = row["problem"], row["mode"]
                a, b = _of(res["samples"], p, m), _of(arms[base]["samples"], p, m)
                if a and b:
                    entries.append({"problem": p, "mode": m} | _difference_entry(a, b, _seeds(res, a)))
            # A mode's mean compares the problems both arms were evaluated on, so the two are alike.
            shared = _entries(res) & _entries(arms[base])
            for mode in res["metrics"]["by_mode"]:
                a = [s for s in _of_mode(res["samples"], mode) if (s["problem"], mode) in shared]
                b = [s for s in _of_mode(arms[base]["samples"], mode) if (s["problem"], mode) in shared]
                if a and b:
                    problems = len({s["problem"] for s in a})
                    modes.append({"mode": mode, "problems": problems} | _difference_entry(a, b, _seeds(res, a)))
            versus[arm] = judge(entries, ci_key="difference_ci")
            versus_mode[arm] = judge(modes, ci_key="difference_ci")
    return {
        "base": base,
        "arms": list(arms),
        "rows": rows,
        "by_mode": {arm: _by_mode(res) for arm, res in arms.items()},
        "versus_base": versus,
        "versus_base_by_mode": versus_mode,
        "verdicts": {arm: _count(entries, "verdict") for arm, entries in versus.items()},
        "verdicts_holm": {arm: _count(entries, "verdict_holm") for arm, entries in versus.items()},
        "machine": sorted({m for res in arms.values() for m in _machines(res["metrics"])}),
        "host": sorted({h for res in arms.values() for h in res["metrics"].get("host", [])}),
    }


def _machines(metrics: dict) -> list[str]:
    """An arm's machine fingerprints: one, or a list when its samples came from several."""
    machine = metrics.get("machine") or []
    return machine if isinstance(machine, list) else [machine]


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
    """Per arm and mode: the suite means (pass@1, expected speedup with its interval,
    speedup_n@k, efficiency_n@k) and, for a trained arm, its ratio to the base with the Holm verdict."""
    versus = {(arm, e["mode"]): e for arm, entries in summary.get("versus_base_by_mode", {}).items() for e in entries}
    out = []
    for arm, modes in summary["by_mode"].items():
        for mode, m in modes.items():
            row = {"arm": arm, "mode": mode, "problems": m["problems"], "pass@1": m["pass_at_1"]}
            row["E[speedup]"] = m["expected_speedup"]
            if m.get("expected_speedup_ci"):
                row["E[speedup] 95% CI"] = "[{:.2f}, {:.2f}]".format(*m["expected_speedup_ci"])
            for k, v in (m.get("speedup_n_at_k") or {}).items():
                row[f"speedup_n@{k}"] = v
            for k, v in (m.get("efficiency_n_at_k") or {}).items():
                row[f"efficiency_n@{k}"] = v
            e = versus.get((arm, mode))
            if e and e["ratio_ci"]:
                row["vs base"] = "{:.2f}x [{:.2f}, {:.2f}]".format(e["ratio"], *e["ratio_ci"])
                row["vs base (Holm)"] = e["verdict_holm"]
            out.append(row)
    return out


def markdown_tables(summary: dict, names: dict[str, str] | None = None) -> tuple[str, str]:
    """The README's two suite tables: per arm and execution model, the mean pass@1 and expected
    speedup over the problems with their intervals and, for a trained arm, its ratio to the base
    (bold where Holm's correction over the arm's modes keeps it); and per (problem, mode), each
    arm's expected speedup, each trained arm's difference from the base with its interval (bold
    where Holm's correction over the arm's 16 cells keeps it), and the best DGEMM kernel as a
    fraction of OpenBLAS at the row's thread count. A test holds the README equal to them."""
    names = names or {}
    name = lambda arm: names.get(arm, arm)  # noqa: E731
    versus = {(a, e["mode"]): e for a, entries in summary.get("versus_base_by_mode", {}).items() for e in entries}
    modes = []
    for arm, by_mode in summary["by_mode"].items():
        for mode, m in by_mode.items():
            e = versus.get((arm, mode))
            ratio = (
                held_text(ratio_text(e["ratio"], e["ratio_ci"]), e["verdict_holm"]) if e and e.get("ratio_ci") else "—"
            )
            cells = [name(arm), mode, str(m["problems"]), interval_text(m["pass_at_1"], m.get("pass_at_1_ci"), 2)]
            modes.append([*cells, interval_text(m["expected_speedup"], m.get("expected_speedup_ci"), 2), ratio])
    arms = summary["arms"]
    trained = [a for a in arms if a != summary.get("base")]
    head = ["problem", "mode", *(f"E[speedup] {name(a)}" for a in arms), *(f"{name(a)} − base" for a in trained)]
    cells_by_row: dict[tuple, dict] = {}
    for r in summary["rows"]:
        cells_by_row.setdefault((r["problem"], r["mode"]), {})[r["arm"]] = r
    diff = {(a, e["problem"], e["mode"]): e for a, entries in summary.get("versus_base", {}).items() for e in entries}
    rows = []
    for (problem, mode), by_arm in cells_by_row.items():
        cells = [problem, mode] + [number_text((by_arm.get(a) or {}).get("expected_speedup"), 2) for a in arms]
        for a in trained:
            e = diff.get((a, problem, mode))
            cells.append(
                held_text(interval_text(e["difference"], e["difference_ci"], 2, sign=True), e["verdict_holm"])
                if e
                else "—"
            )
        fractions = [
            f"{name(a)} {number_text(by_arm[a]['fraction_of_openblas_best'], 2)}"
            for a in arms
            if by_arm.get(a) and by_arm[a].get("fraction_of_openblas_best") is not None
        ]
        rows.append([*cells, ", ".join(fractions) or "—"])
    mode_head = ["arm", "mode", "problems", "pass@1", "expected speedup", "trained / base"]
    return table_text(mode_head, modes), table_text([*head, "best / OpenBLAS"], rows)
