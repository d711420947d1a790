"""Bootstrap intervals of the headline metrics and of differences between arms."""

from __future__ import annotations

import random

import pytest

from lab.analysis.intervals import difference, holm, metric_intervals, verdict


def _samples(n, p_ok, rate, seed=0, spread=0.2, seeds=(0,), shift=None):
    """n samples per seed: ok with probability p_ok, rate ~ rate*(1 ± spread), plus a per-seed shift."""
    rng = random.Random(seed)
    out = []
    for s in seeds:
        offset = (shift or {}).get(s, 0.0)
        for _ in range(n):
            ok = rng.random() < p_ok
            g = rate * (1 + rng.uniform(-spread, spread)) + offset
            out.append({"status": "ok" if ok else "wrong_result", "gflops": g, "speedup": g / 2, "seed": s})
    return out


def test_intervals_bracket_the_point_and_match_the_binomial_width():
    samples = _samples(144, 0.5, 10.0)
    cis = metric_intervals(samples)
    ok = sum(s["status"] == "ok" for s in samples) / len(samples)
    lo, hi = cis["pass_at_1_ci"]
    assert lo < ok < hi
    # The normal approximation of a binomial share: 2 * 1.96 * sqrt(p (1 - p) / n) ~ 0.163.
    assert hi - lo == pytest.approx(0.163, abs=0.03)
    assert set(cis["speedup_n_at_k_ci"]) == {"1", "5", "10"}
    assert cis["expected_speedup_ci"] == pytest.approx(cis["speedup_n_at_k_ci"]["1"])


def test_more_samples_narrow_the_interval():
    def width(n):
        lo, hi = metric_intervals(_samples(n, 0.6, 10.0))["mean_gflops_ok_ci"]
        return hi - lo

    assert width(400) < width(40) / 2


def test_training_seeds_as_clusters_widen_the_interval_when_runs_differ():
    # Three runs that differ a lot from each other, each with many samples: resampling samples
    # alone ignores the spread between runs; resampling the runs shows it.
    samples = _samples(48, 1.0, 10.0, spread=0.05, seeds=(0, 1, 2), shift={0: -5.0, 2: 5.0})
    plain = metric_intervals(samples)["mean_gflops_ok_ci"]
    clustered = metric_intervals(samples, clusters=[s["seed"] for s in samples])["mean_gflops_ok_ci"]
    assert clustered[1] - clustered[0] > 5 * (plain[1] - plain[0])
    assert clustered[0] <= 6.0 and clustered[1] >= 14.0


def test_no_ok_samples_give_no_rate_interval_and_degenerate_shares():
    samples = [{"status": "compile_error", "gflops": None, "speedup": None} for _ in range(8)]
    cis = metric_intervals(samples)
    assert cis["mean_gflops_ok_ci"] is None and cis["median_gflops_ok_ci"] is None
    assert cis["pass_at_1_ci"] == [0.0, 0.0] and cis["expected_speedup_ci"] == [0.0, 0.0]
    assert metric_intervals(samples[:1])["pass_at_1_ci"] is None  # one sample: nothing to resample


def test_differences_find_what_is_there_and_only_that():
    base = _samples(144, 0.5, 10.0, seed=1)
    better = _samples(144, 0.9, 20.0, seed=2)
    d = difference(better, base, "mean_gflops_ok")
    assert d["ci"][0] > 5 and verdict(d["ci"]) == "better" and d["p_value"] < 0.01
    assert d["ratio"] == pytest.approx(d["a"] / d["b"]) and d["ratio_ci"][0] > 1.5
    assert verdict(difference(base, better, "pass_at_1")["ci"]) == "worse"
    same = difference(_samples(144, 0.5, 10.0, seed=3), _samples(144, 0.5, 10.0, seed=4), "expected_speedup")
    assert same["ci"][0] < 0 < same["ci"][1] and verdict(same["ci"]) == "no clear difference" and same["p_value"] > 0.05
    none_ok = [{"status": "wrong_result", "gflops": None, "speedup": None}] * 4
    assert difference(none_ok, base, "median_gflops_ok")["difference"] is None


def test_holm_holds_the_family_and_verdict_reads_an_interval():
    assert holm([0.01, 0.04, 0.03, 0.5]) == [True, False, False, False]
    assert holm([0.001, 0.01, 0.02]) == [True, True, True]
    assert verdict(None) == "no clear difference" and verdict([0.1, 2.0]) == "better" and verdict([-2, -0.1]) == "worse"


def test_unknown_metric_is_refused():
    with pytest.raises(ValueError, match="unknown metric"):
        difference(_samples(4, 1, 1), _samples(4, 1, 1), "fastest")


def test_compliance_is_the_share_of_ok_kernels_that_kept_to_their_prompt():
    samples = [{"status": "ok", "gflops": 1.0, "speedup": 1.0, "compliant": i % 4 != 0} for i in range(40)]
    samples += [{"status": "wrong_result", "gflops": None, "speedup": None, "compliant": False}] * 20
    cis = metric_intervals(samples, metrics=("compliance",))
    lo, hi = cis["compliance_ci"]
    assert lo < 0.75 < hi and hi <= 1.0  # failures do not count: 30 of the 40 ok kernels complied
    assert set(cis) == {"compliance_ci", "speedup_n_at_k_ci"}
