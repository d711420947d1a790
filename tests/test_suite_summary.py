"""The suite summary (lab.analysis.suite) on hand-made finished arms: per-mode means with
intervals, base -> trained per cell and per mode, OpenBLAS fractions carried through."""

from __future__ import annotations

import pytest

from lab.analysis.suite import suite_summary
from lab.files import write_json, write_jsonl
from lab.pipeline.runner import mode_means

ENTRIES = [("dgemm", "serial"), ("dot", "serial"), ("dgemm", "openmp"), ("dot", "openmp")]


def _arm(root, name, kind, speedups, seeds=(0, 1, 2), n=12, blas=50.0):
    """A finished suite arm: every (problem, mode) sampled n times per seed; `speedups` maps an
    entry to the speedup of an ok sample (every third sample fails)."""
    out = root / name
    samples, rows = [], []
    for problem, mode in ENTRIES:
        entry = []
        for seed in seeds:
            for i in range(n):
                ok = i % 3 != 0
                speed = speedups[(problem, mode)] * (1 + 0.1 * (i % 4))
                entry.append(
                    {
                        "seed": seed,
                        "problem": problem,
                        "mode": mode,
                        "status": "ok" if ok else "compile_error",
                        "gflops": 2.0 * speed if ok else None,
                        "speedup": speed if ok else None,
                    }
                )
        samples += entry
        ok = [s for s in entry if s["status"] == "ok"]
        row = {
            "problem": problem,
            "mode": mode,
            "n_samples": len(entry),
            "pass_at_1": len(ok) / len(entry),
            "expected_speedup": sum(s["speedup"] for s in ok) / len(entry),
            "best_gflops": max(s["gflops"] for s in ok),
        }
        if problem == "dgemm":
            row |= {"openblas_gflops": blas, "fraction_of_openblas_best": row["best_gflops"] / blas}
        rows.append(row)
    write_jsonl(out / "samples.jsonl", samples)
    write_json(out / "config.json", {"kind": kind})
    write_json(out / "metrics.json", {"complete": True, "rows": rows, "by_mode": mode_means(rows)})


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    """A base and a trained arm, read into one suite summary (made once; the tests only read it)."""
    tmp_path = tmp_path_factory.mktemp("summary")
    base = {e: 1.0 for e in ENTRIES}
    _arm(tmp_path, "baseline", "baseline", base)
    # Trained: 3x faster in serial, the same in OpenMP.
    _arm(tmp_path, "grpo", "grpo", {e: (3.0 if e[1] == "serial" else 1.0) for e in ENTRIES})
    _arm(tmp_path / "elsewhere", "x", "grpo", base)  # not under results_dir: ignored
    write_json(tmp_path / "unfinished" / "metrics.json", {"complete": False, "rows": []})
    return suite_summary(tmp_path)


def test_modes_compare_base_and_trained_with_intervals(summary):
    assert summary["arms"] == ["baseline", "grpo"] and summary["base"] == "baseline"
    by_mode = {e["mode"]: e for e in summary["versus_base_by_mode"]["grpo"]}
    assert set(by_mode) == {"serial", "openmp"}
    serial, openmp = by_mode["serial"], by_mode["openmp"]
    assert serial["problems"] == 2 and serial["ratio"] == pytest.approx(3.0)
    lo, hi = serial["difference_ci"]
    assert 0 < lo <= serial["difference"] <= hi
    assert serial["verdict"] == serial["verdict_holm"] == "better"
    assert openmp["difference"] == pytest.approx(0.0) and openmp["verdict_holm"] == "no clear difference"
    # Equal samples per problem: the mean over a mode's samples is the arm's mean over its problems.
    for arm in ("baseline", "grpo"):
        for means in summary["by_mode"][arm].values():
            lo, hi = means["expected_speedup_ci"]
            assert lo <= means["expected_speedup"] <= hi
    assert serial["expected_speedup"] == pytest.approx(summary["by_mode"]["grpo"]["serial"]["expected_speedup"])


def test_cells_and_openblas_fractions(summary):
    cells = {(e["problem"], e["mode"]): e for e in summary["versus_base"]["grpo"]}
    assert set(cells) == set(ENTRIES)
    assert cells[("dgemm", "serial")]["ratio"] == pytest.approx(3.0)
    assert summary["verdicts_holm"]["grpo"]["worse"] == 0
    dgemm = {(r["arm"], r["mode"]): r for r in summary["rows"] if r["problem"] == "dgemm"}
    assert dgemm[("grpo", "serial")]["fraction_of_openblas_best"] == pytest.approx(2 * 3.0 * 1.3 / 50.0)
    assert all(r["openblas_gflops"] is None for r in summary["rows"] if r["problem"] == "dot")


def test_markdown_tables_mark_what_holm_keeps(summary):
    from lab.analysis.suite import markdown_tables

    modes, cells = markdown_tables(summary, {"baseline": "base", "grpo": "GRPO"})
    assert "| GRPO | serial | 2 |" in modes and "**3.00× [" in modes  # kept by Holm: bold
    assert "| GRPO | openmp | 2 |" in modes and "| 1.00× [" in modes
    assert modes.count("| base |") == 2 and "| — |" in modes  # the base has no ratio to itself
    dgemm = next(line for line in cells.splitlines() if line.startswith("| dgemm | serial |"))
    assert "base 0.05, GRPO 0.16" in dgemm  # best kernel / OpenBLAS: 2.6 and 7.8 of 50
