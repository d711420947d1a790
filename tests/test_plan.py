"""lab.pipeline.plan: the order a config's arms run in, the notebook of each, and their cost."""

from __future__ import annotations

from lab.config import ExperimentConfig, LabConfig, load_config
from lab.pipeline.plan import ASSUMED_EVAL_S, Step, notebook_plan, reward_evaluations, run_cost
from lab.rl.warm_start import demonstration_records
from tests.conftest import ROOT


def test_the_default_config_runs_its_arms_in_file_order_through_their_notebooks():
    plan = notebook_plan(load_config(ROOT / "configs" / "default.yaml"))
    assert plan == [
        Step("01_baseline", {"experiment": "baseline"}),
        Step("02_grpo", {"experiment": "grpo"}),
        Step("03_grpo_sqd", {"experiment": "grpo_sqd"}),
        Step("02_grpo", {"experiment": "grpo_rft"}),
        Step("04_figures"),
    ]
    assert [s.output_name for s in plan][-2:] == ["02_grpo-grpo_rft.ipynb", "04_figures.ipynb"]
    assert notebook_plan(load_config(ROOT / "configs" / "suite.yaml")) == [Step("05_suite")]


def test_reward_evaluations_count_every_part_of_a_run():
    cfg = load_config(ROOT / "configs" / "default.yaml").experiment("grpo_rft")
    parts = reward_evaluations(cfg)
    # 3 seeds x 40 steps x (8 x 2) completions; 128 warm-start samples per seed; 48 held-out samples
    # per seed; the learning curve at step 0, after the warm start and at steps 10, 20, 30 (40 is the final).
    assert parts == {"training": 1920, "warm_start": 384, "evaluation": 144, "learning_curve": 3 * 16 * 5}
    assert reward_evaluations(ExperimentConfig())["training"] == 0  # a baseline does not train
    # Demonstrations are scored too: the generator's sweep of each (problem, mode), per seed.
    shown = load_config(ROOT / "configs" / "demonstrations.yaml").experiment("demonstrations")
    assert reward_evaluations(shown)["warm_start"] == 384 + 3 * len(demonstration_records("dgemm", "serial", 1, 0))


def test_the_cost_uses_this_machines_benchmark_or_says_where_its_rate_comes_from(tmp_path):
    config = LabConfig(path="c.yaml", experiments={"baseline": ExperimentConfig()}, results_dir=str(tmp_path))
    cost = run_cost(config, "this-machine")
    assert cost["reward_evaluations"] == 144 and cost["seconds_per_evaluation"] == ASSUMED_EVAL_S
    assert "assumed" in cost["rate_from"]
    (tmp_path / "bench_harness.json").write_text('{"per_candidate_s": 0.5, "machine": {"fingerprint": "other"}}')
    cost = run_cost(config, "this-machine")
    assert cost["measuring_minutes"] == 1.2 and "measured on machine other, not this one" in cost["rate_from"]


def test_lab_run_notebooks_executes_the_plan_with_the_config_path(tmp_path, monkeypatch):
    import papermill

    from lab.pipeline.plan import run_notebooks

    calls = []
    monkeypatch.setattr(
        papermill, "execute_notebook", lambda src, out, parameters, **kw: calls.append((src, out, parameters))
    )
    config = load_config(ROOT / "configs" / "default.yaml")
    done = run_notebooks(config, "configs/default.yaml", tmp_path, ROOT)
    assert [p.name for p in done] == [s.output_name for s in notebook_plan(config)]
    assert calls[3] == (
        str(ROOT / "notebooks" / "02_grpo.ipynb"),
        str(tmp_path / "02_grpo-grpo_rft.ipynb"),
        {"config": "configs/default.yaml", "experiment": "grpo_rft"},
    )


def test_lab_run_refuses_notebooks_for_one_arm(capsys):
    from lab.cli import main

    assert (
        main(["run", "--config", str(ROOT / "configs" / "default.yaml"), "--experiment", "grpo", "--notebooks", "x"])
        == 2
    )
    assert "--notebooks runs the config file's whole plan" in capsys.readouterr().err
    args = ["run", "--config", str(ROOT / "configs" / "default.yaml"), "--set", "train.steps=1", "--notebooks", "x"]
    assert main(args) == 2  # the notebooks read the file, not the overrides
