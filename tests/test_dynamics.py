"""The training dynamics by kernel family (lab.analysis.dynamics) and their figure."""

from __future__ import annotations

import pytest

from lab.analysis.dynamics import family_dynamics
from lab.techniques import FAMILIES, family


def _sample(step, techniques, status="ok", reward=1.0, seed=0, phase="grpo"):
    return {"seed": seed, "phase": phase, "step": step, "status": status, "techniques": techniques, "reward": reward}


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        ([], "none"),
        (["openmp"], "none"),
        (["loop_reorder", "cache_blocking", "unrolling"], "loop"),
        (["packing"], "blocked"),
        (["simd", "loop_reorder"], "simd"),
        (["simd", "register_blocking"], "fast"),
        (["simd", "packing", "openmp", "cache_blocking"], "fast"),
    ],
)
def test_a_kernel_family_is_its_structure_not_its_threads(used, expected):
    assert family(used) == expected and expected in FAMILIES


def test_each_step_counts_each_family_its_successes_and_what_it_earned():
    samples = [
        _sample(1, ["loop_reorder"], reward=10.0),
        _sample(1, ["loop_reorder"], reward=20.0, seed=1),
        _sample(1, ["simd", "packing"], status="compile_error", reward=-10.0),
        _sample(1, None, status="format_error", reward=-50.0),
        _sample(2, ["simd", "packing"], reward=90.0),
        _sample(2, [], reward=1.0),
        _sample(0, ["simd", "packing"], reward=99.0, phase="warm_start"),  # not GRPO's: left out
    ]
    log = [
        {"seed": 0, "step": 1, "entropy": 0.4, "frac_reward_zero_std": 0.0},
        {"seed": 1, "step": 1, "entropy": 0.2, "frac_reward_zero_std": 1.0},
    ]
    d = family_dynamics(samples, log)
    assert d["families"] == list(FAMILIES) and d["seeds"] == [0, 1]
    first, second = d["steps"]
    assert (first["step"], first["n"], first["seeds"], first["no_kernel"]) == (1, 4, 2, 1)
    assert first["entropy"] == pytest.approx(0.3) and first["frac_reward_zero_std"] == pytest.approx(0.5)
    assert second["entropy"] is None  # no log row for it
    loop, fast = first["families"]["loop"], first["families"]["fast"]
    assert (loop["attempts"], loop["ok"], loop["share"], loop["ok_share"], loop["success"]) == (2, 2, 0.5, 1.0, 1.0)
    assert loop["mean_reward"] == pytest.approx(15.0)
    assert (fast["attempts"], fast["ok"], fast["success"], fast["mean_reward"]) == (1, 0, 0.0, -10.0)
    assert first["families"]["none"]["success"] is None and first["families"]["none"]["mean_reward"] is None
    assert second["families"]["fast"]["ok_share"] == 0.5
    # Found late: the last window has the fast family right, the first has it wrong.
    assert d["windows"]["first"]["steps"] == [1, 1] and d["windows"]["last"]["steps"] == [2, 2]
    assert d["windows"]["first"]["families"]["fast"]["success"] == 0.0
    assert d["windows"]["last"]["families"]["fast"]["success"] == 1.0


def test_records_without_techniques_give_no_dynamics():
    """Results recorded before the training samples carried techniques: nothing is guessed."""
    old = [{"seed": 0, "phase": "grpo", "step": 1, "status": "ok"}]
    assert family_dynamics(old, [])["steps"] == []


def test_the_family_figure_draws_trained_arms_and_skips_the_rest(tmp_path, saved_figures):
    from lab.analysis import plots

    trained = [_sample(s, t, reward=r) for s in range(1, 11) for t, r in ((["loop_reorder"], 20.0), ([], 1.0))]
    results = {
        "grpo": {"training_samples": trained, "train_log": []},
        "short": {"training_samples": trained[:4], "train_log": []},  # fewer steps than the rolling window
        "baseline": {"training_samples": [], "train_log": []},
    }
    path = plots.family_dynamics(results, tmp_path)
    assert path.name == "family_dynamics.png" and path.stat().st_size > 0
    (fig,) = saved_figures
    assert len(fig.axes) == 2 * len(plots.FAMILY_PANELS)
    assert {line.get_label() for line in fig.axes[0].lines} == {"none", "loop"}
    assert plots.family_dynamics({"baseline": results["baseline"]}, tmp_path / "none") is None


def test_the_table_shows_each_written_family_first_and_last():
    from lab.analysis.dynamics import markdown_table

    samples = [_sample(1, ["loop_reorder"], reward=10.0), _sample(1, ["simd", "packing"], "compile_error", -40.0)]
    samples += [_sample(2, ["loop_reorder"], reward=20.0), _sample(2, ["loop_reorder"], reward=30.0)]
    log = [{"seed": 0, "step": 1, "entropy": 0.4, "frac_reward_zero_std": 0.0}]
    log += [{"seed": 0, "step": 2, "entropy": 0.05, "frac_reward_zero_std": 1.0}]
    table = markdown_table({"grpo": family_dynamics(samples, log)}, {"grpo": "GRPO"})
    lines = table.splitlines()
    assert len(lines) == 2 + 2  # header, rule, and the two families written
    assert lines[2] == "| GRPO | 0.40 → 0.05 | 0% → 100% | loop | 50% → 100% | 100% → 100% | 10.0 → 25.0 |"
    assert lines[3] == "|  | | | fast | 50% → 0% | 0% → — | -40.0 → — |"  # arm, entropy and spread once
