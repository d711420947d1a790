"""Metrics against hand-computed values and brute-force enumeration."""

from __future__ import annotations

import itertools
import statistics

import numpy as np
import pytest

from lab.analysis.metrics import pass_at_k, speedup_at_k, summarize


def brute_pass(outcomes, k):
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


def brute_speedup(values, k):
    subsets = list(itertools.combinations(values, k))
    return sum(max(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize(
    "n, c, k, expected", [(4, 2, 2, 5 / 6), (10, 0, 5, 0.0), (10, 10, 1, 1.0), (5, 1, 1, 0.2), (5, 4, 2, 1.0)]
)
def test_pass_at_k_hand_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_matches_enumeration():
    outcomes = [True, False, False, True, False, False, False]
    for k in range(1, len(outcomes) + 1):
        assert pass_at_k(len(outcomes), sum(outcomes), k) == pytest.approx(brute_pass(outcomes, k))


def test_speedup_at_k_hand_values():
    assert speedup_at_k([0, 1, 2, 3], 1) == pytest.approx(1.5)
    assert speedup_at_k([0, 1, 2, 3], 2) == pytest.approx((1 * 1 + 2 * 2 + 3 * 3) / 6)
    assert speedup_at_k([0, 1, 2, 3], 4) == pytest.approx(3.0)


def test_speedup_at_k_is_the_expected_max_not_min():
    values = [0.0, 0.5, 4.0, 1.2, 0.0, 2.5, 1.0]
    for k in range(1, len(values) + 1):
        assert speedup_at_k(values, k) == pytest.approx(brute_speedup(values, k))
    # Grows with k, unlike ParEval's published script (which takes the slowest of k).
    assert speedup_at_k(values, 3) > speedup_at_k(values, 1)


def test_bad_arguments():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        speedup_at_k([1.0], 2)


def test_summarize():
    rows = [
        {"status": "ok", "gflops": 2.0, "speedup": 1.0},
        {"status": "ok", "gflops": 8.0, "speedup": 4.0},
        {"status": "compile_error", "gflops": None, "speedup": None},
        {"status": "wrong_result", "gflops": None, "speedup": None},
    ]
    m = summarize(rows, openblas_gflops=16.0, ks=(1, 2))
    assert m["n_samples"] == 4 and m["status_counts"] == {"ok": 2, "compile_error": 1, "wrong_result": 1}
    assert m["pass_at_1"] == pytest.approx(0.5)
    assert m["mean_gflops_ok"] == 5.0 and m["median_gflops_ok"] == 5.0 and m["best_gflops"] == 8.0
    assert m["expected_speedup"] == pytest.approx(statistics.fmean([1.0, 4.0, 0.0, 0.0]))
    assert m["expected_speedup_ok"] == pytest.approx(2.5)
    assert m["speedup_n_at_k"]["2"] == pytest.approx(brute_speedup([1.0, 4.0, 0.0, 0.0], 2))
    assert m["speedup_n_at_k_ok"]["2"] == pytest.approx(4.0)
    assert m["fraction_of_openblas_best"] == pytest.approx(0.5)


def _image(path) -> np.ndarray:
    """The PNG at `path` as an RGB(A) array, checked to be a drawn figure: hundreds of pixels a
    side (inches of figure at 120 dpi), and not one flat colour."""
    import matplotlib.image

    pixels = matplotlib.image.imread(path)
    height, width, channels = pixels.shape
    assert channels in (3, 4) and min(height, width) >= 300, pixels.shape
    rgb = np.ascontiguousarray((pixels[..., :3] * 255).round().astype(np.uint8))
    colours = np.unique(rgb.view(np.dtype((np.void, 3))))  # one entry per distinct pixel colour
    assert len(colours) > 50  # text, lines, colours: not blank
    assert (rgb < 240).any(axis=-1).mean() > 0.01  # and not a white page with a speck on it
    return pixels


def test_archive_figures_draw_an_empty_archive_and_skip_runs_without_one(tmp_path, saved_figures):
    from lab.analysis.plots import _COL_TECHS, _ROW_TECHS, archive_heatmap, coverage_over_steps, technique_usage

    empty = {"coverage": 0.0, "qd_score": 0.0, "cells_filled": 0, "best": None, "cells": {}, "stage_history": None}
    results = {
        "baseline": {"metrics": {}, "samples": [{"status": "wrong_result"}], "train_log": []},
        "grpo": {"metrics": {"archive": empty}, "samples": [], "train_log": [{"step": 1, "archive": {"dgemm": empty}}]},
    }
    heatmap, coverage = archive_heatmap(results, tmp_path), coverage_over_steps(results, tmp_path)
    assert (heatmap.name, coverage.name) == ("archive_heatmap.png", "coverage_over_steps.png")
    for png in (heatmap, coverage):
        _image(png)
    # One panel, for the run with an archive: every cell of the technique grid empty (masked).
    grid_fig, coverage_fig = saved_figures
    panels = [ax for ax in grid_fig.axes if ax.get_label() != "<colorbar>"]
    assert len(panels) == 1 and panels[0].get_title().startswith("grpo: 0 of 128 cells, QD score 0 GFLOPS")
    grid = panels[0].collections[0].get_array()
    assert grid.shape == (2 ** len(_ROW_TECHS), 2 ** len(_COL_TECHS)) and np.ma.count(grid) == 0
    (line,) = coverage_fig.axes[0].get_lines()
    assert list(line.get_xdata()) == [1] and list(line.get_ydata()) == [0.0]
    assert technique_usage(results, tmp_path) is None  # no correct sample with techniques recorded
    assert archive_heatmap({"baseline": results["baseline"]}, tmp_path / "none") is None
    assert coverage_over_steps({"baseline": results["baseline"]}, tmp_path / "none") is None
    assert len(saved_figures) == 2 and not (tmp_path / "none").exists()


def test_training_dynamics_draws_each_seed_and_skips_untrained_arms(tmp_path, saved_figures):
    from lab.analysis.plots import DYNAMICS_PANELS, training_dynamics

    log = [
        {"seed": seed, "step": step, "entropy": (0.4 + 0.1 * seed) / step, "frac_reward_zero_std": step / 4,
         "best_gflops_ok": 10.0 + seed + step, "completions/mean_length": 30.0 + 10 * seed}
        for seed in (0, 1)
        for step in range(1, 5)
    ]  # fmt: skip
    log[2]["best_gflops_ok"] = None  # a step with no ok kernel keeps the best so far
    results = {
        "baseline": {"metrics": {}, "samples": [], "train_log": []},
        "grpo": {"metrics": {"openblas_gflops": 48.0, "unit": "GFLOP/s"}, "samples": [], "train_log": log},
    }
    path = training_dynamics(results, tmp_path)
    assert path.name == "training_dynamics.png"
    pixels = _image(path)
    assert pixels.shape[1] > 3 * pixels.shape[0]  # four panels side by side
    # Per panel: each seed's values as a thin line, their mean as a thick one, and nothing of
    # the untrained arm; the best-so-far panel adds OpenBLAS.
    seeds = {
        "entropy": [[0.4 / s for s in range(1, 5)], [0.5 / s for s in range(1, 5)]],
        "frac_reward_zero_std": [[0.25, 0.5, 0.75, 1.0]] * 2,
        "best_so_far": [[11.0, 12.0, 12.0, 14.0], [12.0, 13.0, 14.0, 15.0]],  # seed 0, step 3: none ok
        "completions/mean_length": [[30.0] * 4, [40.0] * 4],
    }
    (fig,) = saved_figures
    assert len(fig.axes) == len(DYNAMICS_PANELS)
    for ax, key in zip(fig.axes, DYNAMICS_PANELS):
        lines = ax.get_lines()
        assert len(lines) == (4 if key == "best_so_far" else 3), key
        assert all(list(line.get_xdata()) == [1, 2, 3, 4] for line in lines[:3])
        drawn = np.array([line.get_ydata() for line in lines[:3]], dtype=float)
        np.testing.assert_allclose(drawn, [*seeds[key], np.mean(seeds[key], axis=0)], err_msg=key)
        assert [line.get_linewidth() for line in lines[:3]] == [0.6, 0.6, 2]
    assert list(fig.axes[list(DYNAMICS_PANELS).index("best_so_far")].get_lines()[3].get_ydata()) == [48.0, 48.0]
    assert training_dynamics({"baseline": results["baseline"]}, tmp_path / "none") is None


def test_efficiency_is_speedup_per_thread():
    rows = [
        {"status": "ok", "gflops": 4.0, "speedup": 4.0, "threads": 2},
        {"status": "ok", "gflops": 1.0, "speedup": 1.0, "threads": 2},
        {"status": "wrong_result", "gflops": None, "speedup": None, "threads": 2},
    ]
    m = summarize(rows, ks=(1, 2))
    assert m["efficiency_n_at_k"]["1"] == pytest.approx((2.0 + 0.5 + 0.0) / 3)
    assert m["efficiency_n_at_k_ok"]["1"] == pytest.approx(1.25)
    assert m["speedup_n_at_k"]["2"] == pytest.approx(brute_speedup([4.0, 1.0, 0.0], 2))


def test_mode_means_average_the_problems_of_each_mode():
    from lab.pipeline.runner import mode_means

    rows = [
        {"mode": "serial", "pass_at_1": 0.5, "expected_speedup": 2.0, "speedup_n_at_k": {"1": 2.0, "5": 4.0},
         "pass_at_k": {"1": 0.5}, "efficiency_n_at_k": {"1": 2.0}},
        {"mode": "serial", "pass_at_1": 1.0, "expected_speedup": 4.0, "speedup_n_at_k": {"1": 4.0},
         "pass_at_k": {"1": 1.0}, "efficiency_n_at_k": {"1": 4.0}},
        {"mode": "openmp", "pass_at_1": 0.25, "expected_speedup": 3.0, "speedup_n_at_k": {"1": 3.0},
         "pass_at_k": {"1": 0.25}, "efficiency_n_at_k": {"1": 1.5}},
    ]  # fmt: skip
    means = mode_means(rows)
    assert means["serial"] == {
        "problems": 2,
        "pass_at_1": 0.75,
        "expected_speedup": 3.0,
        "pass_at_k": {"1": 0.75},
        "speedup_n_at_k": {"1": 3.0},  # k = 5 is missing from one row: left out
        "efficiency_n_at_k": {"1": 3.0},
    }
    assert means["openmp"]["problems"] == 1 and means["openmp"]["efficiency_n_at_k"] == {"1": 1.5}


def test_restricted_prompts_are_the_same_for_every_arm_and_never_offer_openmp_in_serial():
    from lab.pipeline.runner import restricted_sets
    from lab.techniques import problem_techniques

    serial = restricted_sets("dgemm", "serial", seed=1, num=200)
    assert serial == restricted_sets("dgemm", "serial", seed=1, num=200)
    assert serial != restricted_sets("dgemm", "serial", seed=2, num=200)
    assert all(len(s) <= 2 and "openmp" not in s for s in serial)
    assert set().union(*serial) == set(problem_techniques("dgemm")) - {"openmp"}
    assert any("openmp" in s for s in restricted_sets("dgemm", "openmp", seed=1, num=200))


def test_restricted_row_counts_compliance_among_ok_kernels():
    from lab.pipeline.runner import _restricted_row

    samples = [{"seed": s, "status": "ok", "speedup": 2.0, "compliant": i != 0} for s in (0, 1) for i in range(3)] + [
        {"seed": 0, "status": "compile_error", "speedup": None, "compliant": False}
    ]
    row = _restricted_row(samples, trained=True)
    assert row["n_samples"] == 7 and row["pass_at_1"] == pytest.approx(6 / 7)
    assert row["compliance"] == pytest.approx(4 / 6) and row["expected_speedup"] == pytest.approx(12 / 7)
    lo, hi = row["compliance_ci"]
    assert lo <= row["compliance"] <= hi
