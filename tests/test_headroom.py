"""`make headroom` (lab.bench.headroom): which kernels it scans, how its paired rounds and ceiling
are formed, that it resumes, and its figure. The measurement is replaced by a fake scorer: these
tests compile and time nothing."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from lab.analysis import plots
from lab.bench import headroom
from lab.harness import plausibility
from lab.harness.problems import load_problem

RATES = {"L1": 300.0, "L2": 110.0, "L3": 80.0, "DRAM": 40.0}
CACHES = {"L1": 32e3, "L2": 1e6, "L3": 32e6}


@pytest.fixture(autouse=True)
def calibrated(monkeypatch):
    """Calibrations as a Zen 4 core has them, without measuring."""
    monkeypatch.setattr(plausibility, "peak_gflops_per_core", lambda: 58.0)
    monkeypatch.setattr(plausibility, "bandwidth_gbs", lambda threads: {k: v * threads for k, v in RATES.items()})
    monkeypatch.setattr(plausibility, "cache_bytes", lambda threads: dict(CACHES))


class FakeScorer:
    """Scores a kernel by its name among the candidates: `rates[name]` (default 1.0), None for a
    failure; records each batch's order."""

    def __init__(self, problem: str, mode: str, rates: dict[str, float | None]):
        self.names = {src: name for name, src in headroom.candidates(problem, mode).items()}
        self.rates, self.batches = rates, []

    def __call__(self, sources, problem, config):
        names = [self.names[s] for s in sources]
        self.batches.append((names, config))
        rates = [self.rates.get(n, 1.0) for n in names]
        return [SimpleNamespace(status="ok" if r else "wrong_result", gflops=r, speedup=r) for r in rates]


def test_serial_scans_no_openmp_kernel_and_openmp_scans_them():
    serial, openmp = headroom.candidates("dgemm", "serial"), headroom.candidates("dgemm", "openmp")
    assert "example:naive.c" in serial and "example:packed_avx512_omp.c" in serial  # scored: forbidden there
    sweep_serial = [k for k in serial if k.startswith("sweep:")]
    assert sweep_serial and not any("omp=" in k or "simd=pragma" in k for k in sweep_serial)
    assert any("omp=" in k for k in openmp) and set(serial) < set(openmp)


def test_ceiling_is_the_best_contender_over_naive_within_each_round():
    names = list(headroom.candidates("dot", "serial"))
    sweep = next(k for k in names if k.startswith("sweep:"))
    rates = {"example:naive.c": 1.0, "example:avx512_accumulators.c": 1.8, sweep: 1.2}
    scorer = FakeScorer("dot", "serial", rates)
    e = headroom.entry("dot", "serial", 4096, threads=2, rounds=3, evaluate=scorer, log=lambda _: None)
    assert e["threads"] == 1 and all(c.threads == 1 and c.mode == "serial" for _, c in scorer.batches)
    assert e["best_example"] == "avx512_accumulators.c" and e["best_sweep"] == sweep
    assert e["best_kernel"] == "avx512_accumulators.c"
    assert e["ceiling"] == pytest.approx(1.8) and e["ceiling_lowest"] == pytest.approx(1.8)
    assert e["below_threshold"] is False
    # One scan of every candidate, then three rounds of the same three kernels, each first once.
    assert len(scorer.batches[0][0]) == len(names)
    rounds = [b for b, _ in scorer.batches[1:]]
    assert len(rounds) == 3 and all(sorted(r) == sorted(rounds[0]) for r in rounds)
    assert len({r[0] for r in rounds}) == 3
    assert e["roofline_limiter"] in {"L1", "L2", "L3", "DRAM", "fma_peak"} and e["roofline_over_naive"] > 0


def test_an_entry_whose_contenders_all_fail_has_no_ceiling_and_is_below_threshold():
    rates = {name: None for name in headroom.candidates("dot", "serial")} | {"example:naive.c": 1.0}
    e = headroom.entry("dot", "serial", 4096, 2, 2, FakeScorer("dot", "serial", rates), log=lambda _: None)
    assert e["ceiling"] is None and e["below_threshold"] and e["best_example"] is None


def test_the_naive_kernel_never_counts_as_the_best_example():
    rates = {"example:naive.c": 5.0}  # every other kernel 1.0: slower than naive
    e = headroom.entry("dot", "serial", 4096, 2, 2, FakeScorer("dot", "serial", rates), log=lambda _: None)
    assert e["best_example"] != "naive.c" and e["ceiling"] == pytest.approx(0.2) and e["below_threshold"]


def test_ceiling_median_and_lowest_round():
    rounds = [{"naive.c": 1.0, "a": 2.0}, {"naive.c": 1.0, "a": 1.2}, {"naive.c": 1.0, "a": 1.6}]
    assert headroom.ceiling(rounds, ["a"]) == (pytest.approx(1.6), pytest.approx(1.2))


def test_cache_size_fits_half_the_l3_and_is_skipped_where_the_timed_size_already_fits(tmp_path, monkeypatch):
    dot = load_problem("dot")
    n = headroom.size_for("dot", "serial", "cache", 1)
    assert dot.working_set(n) <= CACHES["L3"] / 2 < dot.working_set(n + 1)
    assert headroom.size_for("dgemm", "serial", "cache", 1) == load_problem("dgemm").default_n  # 1.6 MB fits
    assert headroom.size_for("dot", "serial", "4096", 1) == 4096
    calls = []
    monkeypatch.setattr(headroom, "entry", lambda *a, **k: calls.append(a) or _fake_entry(*a))
    headroom.run(["dgemm"], ["serial"], ["timed", "cache"], 2, 1, tmp_path / "h.json", log=lambda _: None)
    assert [a[2] for a in calls] == [256]


def _fake_entry(problem, mode, n, threads, rounds, *rest):
    return {"problem": problem, "mode": mode, "n": n, "threads": 1 if mode == "serial" else threads}


def test_run_writes_after_each_entry_and_resumes_what_it_holds(tmp_path, monkeypatch):
    out = tmp_path / "headroom.json"
    calls = []
    monkeypatch.setattr(headroom, "entry", lambda *a, **k: calls.append(a[:3]) or _fake_entry(*a))
    headroom.run(["dot", "dgemv"], ["serial", "openmp"], ["timed"], 2, 2, out, log=lambda _: None)
    report = json.loads(out.read_text())
    assert report["finished"] and len(report["entries"]) == 4 and len(calls) == 4
    assert report["provenance"]["machine_class"] and report["bandwidth_gbs"]["t2"]["DRAM"] == 80.0
    headroom.run(["dot", "dgemv"], ["serial", "openmp"], ["timed"], 2, 2, out, log=lambda _: None)
    assert len(calls) == 4  # nothing measured again
    headroom.run(["dot"], ["serial"], ["timed"], 2, 3, out, log=lambda _: None)
    assert len(calls) == 5  # more rounds asked: measured again


def test_bad_arguments_exit_with_a_usage_error(capsys):
    with pytest.raises(SystemExit) as bad:
        headroom.main(["--problem", "nosuch"])
    assert bad.value.code == 2 and "unknown problem nosuch" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad:
        headroom.main(["--modes", "serial,gpu"])
    assert bad.value.code == 2 and "unknown mode gpu" in capsys.readouterr().err
    with pytest.raises(SystemExit) as bad:
        headroom.main(["--sizes", "timed,0"])
    assert bad.value.code == 2 and "unknown size 0" in capsys.readouterr().err


def test_figure_renders_from_a_report(tmp_path):
    scorer = FakeScorer("dot", "serial", {"example:naive.c": 1.0, "example:avx512_accumulators.c": 1.3})
    timed = headroom.entry("dot", "serial", 8_000_000, 2, 2, scorer, log=lambda _: None)
    cache = headroom.entry("dot", "serial", 4096, 2, 2, scorer, log=lambda _: None)
    report = {
        "threads": 2,
        "rounds": 2,
        "threshold": 1.5,
        "entries": [timed | {"size": "timed"}, cache | {"size": "cache"}],
    }
    path = plots.headroom(report, tmp_path)
    assert path.is_file() and path.stat().st_size > 10_000
    assert "dot" in headroom.table(report) and "<1.5" in headroom.table(report)


def test_autotune_serial_sweeps_no_openmp_and_times_openblas_only_for_blas_problems(monkeypatch):
    from lab.bench import autotune

    seen, blas = [], []
    monkeypatch.setattr(
        autotune,
        "evaluate_batch",
        lambda sources, problem, config, cache: (
            seen.append(config)
            or [SimpleNamespace(status="ok", gflops=float(i + 1), detail="") for i in range(len(sources))]
        ),
    )
    monkeypatch.setattr(autotune, "openblas_gflops", lambda problem, n, threads: blas.append(problem) or 50.0)
    report = autotune.autotune("dot", 4096, threads=2, mode="serial")
    assert seen[0].mode == "serial" and seen[0].threads == 1 and report["threads"] == 1
    assert not any(row["omp"] or row["simd"] == "pragma" for row in report["variants_table"])
    assert report["openblas_gflops"] is None and report["best"]["fraction_of_openblas"] is None and not blas
    report = autotune.autotune("dgemm", 64, threads=2)
    assert report["mode"] == "openmp" and any(row["omp"] for row in report["variants_table"])
    assert blas == ["dgemm"] and report["best"]["fraction_of_openblas"] == pytest.approx(report["best"]["gflops"] / 50)
