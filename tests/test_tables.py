"""The notebooks' tables: 3 significant digits and intervals as [lo, hi], never raw floats."""

from __future__ import annotations

from lab.analysis.tables import headline, readable, statuses


def test_readable_rounds_numbers_and_writes_intervals():
    rows = [
        {"arm": "grpo", "mode": "serial", "expected_speedup": 8.254913207, "expected_speedup_ci": [4.5712, 18.8731]},
        {"arm": "grpo", "mode": "openmp", "expected_speedup": 0.000123456, "expected_speedup_ci": None, "n": 144},
    ]
    frame = readable(rows, ["arm", "mode"])
    assert frame.loc[("grpo", "serial"), "expected_speedup"] == "8.25"
    assert frame.loc[("grpo", "serial"), "expected_speedup_ci"] == "[4.57, 18.9]"
    assert frame.loc[("grpo", "openmp"), "expected_speedup"] == "0.000123"
    assert frame.loc[("grpo", "openmp"), "n"] == 144  # counts stay counts
    assert list(readable([], "arm").columns) == []  # nothing to show is an empty table, not an error


def test_headline_and_statuses_of_an_arm():
    metrics = {
        "pass_at_1": 0.5138888,
        "pass_at_1_ci": [0.41, 0.6049],
        "n_samples": 144,
        "status_counts": {"ok": 3, "timeout": 1},
    }
    table = headline(metrics)
    assert list(table.index) == ["n_samples", "pass_at_1"]
    assert table.loc["pass_at_1", "value"] == "0.514" and table.loc["pass_at_1", "95% interval"] == "[0.41, 0.605]"
    assert statuses(metrics).loc["ok", "share"] == "0.75"


def _seed_report(tier: str, sha: str, attempts: int, ok: int, build_s: float) -> dict:
    return {
        "target": tier,
        "build_s": build_s,
        "provenance": {"policy_sha256": sha},
        "targets": {
            "held_out.ok_rate": ">= 0.3",
            "held_out.microkernel.attempt_share": ">= 0.05",
            "held_out.microkernel.ok_share_of_attempts": ">= 0.2",
            "build_s": "<= 600",
        },
        "held_out": {
            "samples": 100,
            "ok_rate": 0.25,
            "status_counts": {"ok": 25, "format_error": 10, "compile_error": 65},
            "format_error_causes": {"another problem's function": 7, "garbled or partial": 3},
            "microkernel": {
                "attempts": attempts,
                "attempt_share": attempts / 100,
                "ok": ok,
                "ok_share_of_attempts": ok / attempts if attempts else None,
                "status_counts": {"ok": ok, "compile_error": attempts - ok} if ok else {"compile_error": attempts},
                "best_gflops_ok": 31.25 if ok else None,
            },
        },
    }


def test_seed_policy_table_marks_each_missed_target_per_tier(tmp_path):
    from lab.analysis.seed_policy_table import markdown_table
    from lab.files import write_json

    write_json(tmp_path / "a" / "seed_policy.json", _seed_report("avx512", "s1", 4, 0, 700.0))
    write_json(tmp_path / "b" / "seed_policy.json", _seed_report("avx2", "s1", 10, 3, 700.0))
    best = {"family": "microkernel", "simd": "avx2", "regblock": [6, 8], "gflops": 45.0}
    write_json(tmp_path / "b" / "autotune.json", {"best": best, "openblas_gflops": 50.0})
    rows = {
        line.split(" | ")[0].strip("| "): line.split(" | ")[1:]
        for line in markdown_table([tmp_path / "a", tmp_path / "b"]).splitlines()
    }
    assert rows["measure"] == ["target", "avx512", "avx2 |"]
    assert rows["held-out `ok`"] == ["≥ 30%", "25 (25.0%), **missed**", "25 (25.0%), **missed** |"]
    assert rows["micro-kernel attempted"] == ["≥ 5%", "4 (4.0%), **missed**", "10 (10.0%) |"]
    assert rows["micro-kernel `ok` of its attempts"][1:] == [
        "0 of 4 (all compile_error), **missed**",
        "3 of 10 (30%), best 31.2 GFLOPS |",
    ]
    assert rows["build time (2 cores)"] == ["≤ 600 s", "700 s, **missed**", "same policy |"]
    assert rows["autotuning best / OpenBLAS of the tier (2 threads)"][1:] == [
        "—",
        "45.0 / 50.0 = 0.90 (AVX2 6×8 micro-kernel) |",
    ]
