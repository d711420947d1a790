"""lab.config and `lab run`: strict YAML, inheritance, one-line errors, the resolved config."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from lab.cli import main
from lab.config import ConfigError, ExperimentConfig, load_config
from tests.conftest import ROOT

CONFIGS = ROOT / "configs"


@pytest.mark.parametrize("name", ["default", "smoke", "paper", "suite", "suite_smoke"])
def test_shipped_configs_load_with_their_arms(name):
    config = load_config(CONFIGS / f"{name}.yaml")
    # The suite drops the DGEMM-only warm start, and leaves SQD to the SQD study (its smoke keeps it).
    arms = {"suite": ["baseline", "grpo"], "suite_smoke": ["baseline", "grpo", "grpo_sqd"]}
    assert list(config.experiments) == arms.get(name, ["baseline", "grpo", "grpo_sqd", "grpo_rft"])
    if not name.startswith("suite"):
        assert config.experiment("grpo_rft").warm_start is not None and config.experiment("grpo").warm_start is None
    assert config.experiment("baseline").kind == "baseline" and config.experiment("grpo").sqd is None
    if "grpo_sqd" in config.experiments:
        assert config.experiment("grpo_sqd").sqd is not None


#: The configs whose make targets compare every arm with one reference arm (lab compare --against ARM).
REFERENCE = {
    "ablation": "grpo",
    "exploration": "grpo",
    "demonstrations": "grpo",
    "reworded_long": "grpo",
    "exploration_screen": "reworded",
    "exploration_long": "reworded_200",
}


def test_every_shipped_config_loads_and_compares_fairly():
    # Each config is checked as its make target compares it.
    from lab.analysis.compare import check_fair

    names = sorted(p.stem for p in CONFIGS.glob("*.yaml"))
    assert {"ablation", "exploration", "long"} <= set(names)
    for name in names:
        config = load_config(CONFIGS / f"{name}.yaml")
        if name.startswith("sqd_"):  # the SQD study's arms differ in their SQD settings only
            check_fair(config, suites=True)
        elif all(e.suite is None for e in config.experiments.values()):  # lab.analysis.suite compares suites
            check_fair(config, REFERENCE.get(name))
    long, default = load_config(CONFIGS / "long.yaml"), load_config(CONFIGS / "default.yaml")
    assert long.experiment("grpo_rft").warm_start == default.experiment("grpo_rft").warm_start
    assert long.experiment("grpo").train.steps == 5 * default.experiment("grpo").train.steps


def test_arms_share_settings_and_smoke_inherits_from_default():
    default, smoke = load_config(CONFIGS / "default.yaml"), load_config(CONFIGS / "smoke.yaml")
    grpo, sqd = default.experiment("grpo"), default.experiment("grpo_sqd")
    assert grpo.train == sqd.train and grpo.measure == sqd.measure and grpo.reward == sqd.reward
    assert grpo.train.learning_rate == 3e-4  # one value, used by every arm (no notebook copy)
    s = smoke.experiment("grpo")
    assert s.train.steps == 2 and s.train.learning_rate == grpo.train.learning_rate  # changed / inherited
    assert s.measure.n == 64 and s.measure.threads == grpo.measure.threads
    assert smoke.experiment("grpo_sqd").sqd.steps_per_stage == 1


def test_the_suite_config_covers_every_problem_in_both_modes_with_a_scale_free_reward():
    from lab.harness.problems import list_problems

    suite = load_config(CONFIGS / "suite.yaml")
    for exp in suite.experiments.values():
        assert {(e.problem, e.mode) for e in exp.suite} == {
            (p, m) for p in list_problems() for m in ("serial", "openmp")
        }
        assert exp.reward.positive == "rank" and exp.measure.threads == 2
        assert exp.measure.for_mode("serial").threads == 1 and exp.measure.for_mode("openmp").threads == 2
    # Every arm is the DGEMM config's arm, on the suite, with the same budget and stages.
    default = load_config(CONFIGS / "default.yaml")
    assert suite.experiment("grpo").train == default.experiment("grpo").train
    assert suite.experiment("grpo").sqd is None and suite.experiment("baseline").kind == "baseline"


@pytest.mark.parametrize(
    "suite, extra, expected",
    [
        ("[{problem: dot, mode: serial}, {problem: dgemm, mode: serial}]", "", "needs a scale-free reward"),
        (
            "[{problem: dot, mode: serial}, {problem: dot, mode: serial}]",
            "reward: {positive: speedup}\n",
            "repeated: dot/serial",
        ),
        ("[{problem: dot, mode: parallel}]", "", "mode: input should be 'serial' or 'openmp'"),
        ("[{problem: dot, mode: serial, weight: 0}]", "", "weight: input should be greater than 0"),
        ("[]", "", "list at least one"),
    ],
)
def test_bad_suites_are_refused_with_one_line(tmp_path, suite, extra, expected):
    path = write(tmp_path, f"defaults: {CONFIGS / 'default.yaml'}\nsuite: {suite}\n{extra}")
    with pytest.raises(ConfigError, match=expected) as err:
        load_config(path)
    assert "\n" not in str(err.value)


def test_a_single_problem_suite_may_keep_the_gflops_reward(tmp_path):
    path = write(
        tmp_path,
        f"defaults: {CONFIGS / 'default.yaml'}\nsuite: [{{problem: dgemm, mode: serial}}, {{problem: dgemm, mode: openmp}}]\n",
    )
    exp = load_config(path).experiment("grpo")
    assert exp.reward.positive == "gflops" and [e.mode for e in exp.entries] == ["serial", "openmp"]


def write(tmp_path, text: str, name: str = "c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_overrides_apply_to_all_or_one_experiment(tmp_path):
    base = CONFIGS / "default.yaml"
    config = load_config(base, ["train.steps=7", "experiments.grpo_sqd.train.steps=9", "measure.n=null"])
    assert config.experiment("grpo").train.steps == 7 and config.experiment("grpo_sqd").train.steps == 9
    assert load_config(base, ["train.learning_rate=1e-5"]).experiment("grpo").train.learning_rate == 1e-5


@pytest.mark.parametrize(
    "text, expected",
    [
        ("train:\n  stpes: 3\n", r"c\.yaml: train\.stpes: unknown key; expected one of: steps, "),
        ("measure:\n  threads: two\n", r"c\.yaml: measure\.threads: input should be a valid integer, got 'two'"),
        ("train:\n  steps: 0\n", r"c\.yaml: train\.steps: input should be greater than or equal to 1, got 0"),
        (
            "experiments:\n  grpo:\n    train: {group_size: 1}\n",
            r"c\.yaml: experiments\.grpo\.train\.group_size: input should be greater than or equal to 2",
        ),
        (
            "reward:\n  positive: fast\n",
            r"c\.yaml: reward\.positive: input should be 'gflops', 'speedup', 'log_speedup' or 'rank'",
        ),
        ("sampels: 3\n", r"c\.yaml: sampels: unknown key; expected one of: name, kind, model"),
        (
            "experiments:\n  grpo:\n    sqd: {stpes_per_stage: 1}\n",
            r"c\.yaml: experiments\.grpo\.sqd\.stpes_per_stage: unknown key",
        ),
        ("evaluation: 5\n", r"c\.yaml: evaluation: input should be a dictionary"),
        ("compute: {backend: dask}\n", r"c\.yaml: compute: backend dask needs address: tcp://host:port"),
        ("compute: {address: tcp://h:1}\n", r"c\.yaml: compute: address tcp://h:1 is for backend: dask"),
        ("compute: {backend: ray}\n", r"c\.yaml: compute\.backend: input should be 'local' or 'dask'"),
        (
            "experiments:\n  grpo:\n    train: {save_total_limit: 2}\n",
            r"c\.yaml: experiments\.grpo: train\.save_total_limit deletes checkpoints the learning curve evaluates",
        ),
    ],
)
def test_bad_configs_name_file_key_and_expectation(tmp_path, text, expected):
    path = write(tmp_path, f"defaults: {CONFIGS / 'default.yaml'}\n{text}")
    with pytest.raises(ConfigError, match=expected) as err:
        load_config(path)
    assert "\n" not in str(err.value)


def test_errors_in_an_inherited_file_name_that_file(tmp_path):
    write(tmp_path, f"defaults: {CONFIGS / 'default.yaml'}\ntrain:\n  steps: -1\n", "parent.yaml")
    child = write(tmp_path, "defaults: parent.yaml\n", "child.yaml")
    with pytest.raises(ConfigError, match=r"parent\.yaml: train\.steps:"):
        load_config(child)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("defaults: nowhere.yaml\n", "nowhere.yaml: no such config file"),
        ("defaults: c.yaml\n", "inheritance cycle"),
        ("train: [1, 2\n", "not valid YAML"),
        ("- a\n- b\n", "expected a mapping"),
        ("model: m\n", "the file names no experiment"),
    ],
)
def test_unusable_files_fail_with_one_line(tmp_path, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_config(write(tmp_path, text))


def test_set_needs_key_and_value():
    with pytest.raises(ConfigError, match="expected key.path=value"):
        load_config(CONFIGS / "default.yaml", ["train.steps"])


def test_resolved_config_round_trips():
    cfg = load_config(CONFIGS / "default.yaml").experiment("grpo_sqd")
    assert ExperimentConfig.from_dict(cfg.to_dict()) == cfg


def test_run_dry_run_prints_the_resolved_config(capsys):
    assert (
        main(
            [
                "run",
                "--config",
                str(CONFIGS / "default.yaml"),
                "--experiment",
                "grpo",
                "--dry-run",
                "--set",
                "train.steps=3",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    printed = yaml.safe_load(out)
    from lab.results import open_config

    # The config as it runs here: its results in this machine's folder (lab.results).
    assert printed == open_config(CONFIGS / "default.yaml", ["train.steps=3"]).experiment("grpo").to_dict()
    assert printed["train"]["steps"] == 3 and printed["name"] == "grpo"
    # And what running it costs: 3 seeds x 3 steps x 16 completions, 48 held-out samples per seed.
    assert "# grpo: " in out and "training 144" in out and "evaluation 144" in out and "minutes of measuring" in out


def test_run_with_an_unknown_key_exits_2_with_one_line(tmp_path):
    path = write(tmp_path, f"defaults: {CONFIGS / 'default.yaml'}\ntrain:\n  stpes: 3\n")
    proc = subprocess.run(
        [sys.executable, "-m", "lab.cli", "run", "--config", str(path), "--experiment", "grpo", "--dry-run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "train.stpes: unknown key" in proc.stderr


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--experiment", "nope"], "no experiment 'nope'; this file has: baseline, grpo, grpo_sqd"),
        (["--experiment", "grpo", "--set", "problem=dgemmm"], "unknown problem 'dgemmm'; known: dgemm, dgemv"),
        (
            [
                "--experiment",
                "grpo",
                "--set",
                "suite=[{problem: dott, mode: serial}]",
                "--set",
                "reward.positive=speedup",
            ],
            "unknown problem 'dott'; known: dgemm, dgemv, dot",
        ),
    ],
)
def test_run_refuses_unknown_experiments_and_problems(argv, expected, capsys):
    assert main(["run", "--config", str(CONFIGS / "default.yaml"), "--dry-run", *argv]) == 2
    assert expected in capsys.readouterr().err


def test_version_and_help_with_defaults(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("lab 0.")
    for command in ("run", "score", "score-batch", "compare", "sample"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "(default:" in capsys.readouterr().out


def test_an_inherited_experiment_set_to_null_is_dropped(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text(f"defaults: {CONFIGS / 'default.yaml'}\nexperiments:\n  grpo_rft: null\n  extra:\n")
    config = load_config(child)
    assert list(config.experiments) == ["baseline", "grpo", "grpo_sqd", "extra"]
    assert config.experiment("extra").kind == "baseline"  # a new experiment set to null: all defaults
