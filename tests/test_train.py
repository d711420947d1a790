"""GRPO training on a tiny seed policy: the reward contract, a real two-step run, resume after a kill."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from lab.config import EvaluationConfig, ExperimentConfig, MeasureConfig, RewardConfig, SQDConfig, TrainConfig
from lab.rl.reward import TERMS, HarnessReward, reward_from_result
from lab.rl.train import build_trainer
from tests.conftest import EXAMPLES, KERNELS, ROOT, TINY_MEASURE

pytestmark = pytest.mark.slow  # trains GRPO

#: Rewards measured at a small size: training needs a verdict and a rough speed, not precise timing.
FAST_REWARD = MeasureConfig(n=48, min_time_s=0.01, min_reps=2, baseline=False)


def experiment(policy, sqd: SQDConfig | None = None, **train) -> ExperimentConfig:
    """A GRPO experiment on the tiny policy with the given training budget."""
    return ExperimentConfig(
        name="tiny", kind="grpo", model=str(policy), measure=TINY_MEASURE, train=TrainConfig(**train), sqd=sqd
    )


@pytest.fixture(scope="module")
def tiny_policy(smoke_policy):
    return smoke_policy


def test_harness_reward_honours_trls_contract():
    fn = HarnessReward("dgemm", RewardConfig(), FAST_REWARD)
    naive = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
    completions = [[{"role": "assistant", "content": f"```c\n{naive}```"}], "no code", naive]
    rewards = fn(completions, prompts=["p"] * 3, problem=["dgemm"] * 3, completion_ids=[[1]] * 3, trainer_state=None)
    assert len(rewards) == 3 and all(isinstance(r, float) for r in rewards)
    assert rewards[0] > 0 and rewards[1] == -100.0 and rewards[2] > 0  # GFLOPS: positive, timing-dependent
    assert [r.status for r in fn.last] == ["ok", "format_error", "ok"]


def test_the_reward_terms_measure_once_and_add_up_to_the_reward():
    """The terms TRL calls one after another on the real harness: one evaluation for all three,
    summing to reward_from_result's number (no SQD: the compliance and bonus terms are 0)."""
    from lab.rl.reward import _evaluate

    calls = []

    def counted(texts, problem, config):
        calls.append(list(texts))
        return _evaluate(texts, problem, config)

    fn = HarnessReward("dgemm", RewardConfig(), FAST_REWARD, evaluate=counted)
    naive = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
    broken = naive.replace("= sum;", "= sum")  # a missing semicolon
    completions = [[{"role": "assistant", "content": f"```c\n{naive}```"}], "no code", broken]
    kwargs = dict(prompts=["p"] * 3, problem=["dgemm"] * 3, completion_ids=[[1]] * 3, trainer_state=None)
    terms = [term(completions, **kwargs) for term in fn.terms]
    assert len(calls) == 1 and [r.status for r in fn.last] == ["ok", "format_error", "compile_error"]
    assert all(isinstance(v, float) for values in terms for v in values)
    assert terms[1] == terms[2] == [0.0, 0.0, 0.0]
    assert [sum(row) for row in zip(*terms)] == [reward_from_result(r, RewardConfig()) for r in fn.last]


def test_harness_reward_forbids_techniques_outside_the_permitted_set():
    fn = HarnessReward("dgemm", RewardConfig(), FAST_REWARD)
    omp = (KERNELS / "legit" / "omp_collapse_dynamic.c").read_text()
    rewards = fn([omp, omp, omp], permitted=[None, ["openmp"], ["simd"]])
    assert rewards[0] > 0 and rewards[1] > 0 and rewards[2] == -100.0
    assert fn.last[2].status == "forbidden" and "openmp" in fn.last[2].detail


def test_two_grpo_steps_log_a_loss_and_change_parameters(tiny_policy, tmp_path):
    import torch

    cfg = experiment(
        tiny_policy,
        steps=2,
        group_size=4,
        prompts_per_step=1,
        max_completion_length=96,
        save_steps=100,
        learning_rate=1e-3,
    )

    # The smoke policy's samples may all fail alike (zero reward spread, so zero advantage);
    # a length term guarantees spread, so the update is real. The harness reward still runs.
    def length(completions, **kwargs):
        return [float(len(str(c))) / 100 for c in completions]

    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "log.jsonl", extra_reward_funcs=[length])
    # The harness reward measures and rewards as the experiment says, as TRL's first reward functions.
    assert isinstance(trainer.harness_reward, HarnessReward) and trainer.sqd_schedule is None
    assert trainer.reward_funcs[: len(TERMS)] == list(trainer.harness_reward.terms)
    assert trainer.reward_func_names == [*TERMS, "length"] and trainer.args.reward_weights == [1.0] * (len(TERMS) + 1)
    assert not trainer.harness_reward.unscored_as_none  # `length` scores every row: harness errors get group means
    assert trainer.harness_reward.measure == TINY_MEASURE and trainer.harness_reward.reward == cfg.reward
    assert trainer.args.max_steps == 2 and trainer.args.num_generations == 4 and trainer.args.seed == cfg.seed
    before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:
        assert "loss" in r and "reward" in r and "reward_std" in r and "frac_reward_zero_std" in r
        assert all(f"rewards/{name}/mean" in r and f"rewards/{name}/std" in r for name in [*TERMS, "length"])
        assert sum(r["status_counts"].values()) == 4 and r["reward_s"] > 0
        parts = r["generation_s"] + r["reward_s"] + r["update_s"]
        assert r["generation_s"] > 0 and r["update_s"] > 0 and parts == pytest.approx(r["step_s"], rel=1e-6)


def test_max_at_k_ends_after_max_at_k_steps_as_trl_counts_them(tiny_policy, tmp_path):
    """TRL hands the reward functions its trainer state while a step's completions are scored,
    its global_step the 0-based step: with max_at_k_steps 1, step 1 is scored under max@2 and
    step 2 under the plain reward, and the log says which."""
    cfg = ExperimentConfig(
        name="tiny",
        kind="grpo",
        model=str(tiny_policy),
        measure=TINY_MEASURE,
        reward=RewardConfig(max_at_k=2, max_at_k_steps=1),
        train=TrainConfig(steps=2, group_size=4, prompts_per_step=1, max_completion_length=64, save_steps=100),
    )
    steps = []

    def spy(completions, trainer_state, **kwargs):
        steps.append(trainer_state.global_step)
        return [0.0] * len(completions)

    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "log.jsonl", extra_reward_funcs=[spy])
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert steps == [0, 1] and [r["max_at_k"] for r in rows] == [2, None]
    with pytest.raises(ValueError, match="below train.steps"):
        dataclasses.replace(cfg, reward=RewardConfig(max_at_k=2, max_at_k_steps=2))
    with pytest.raises(ValueError, match="a multiple of train.num_iterations"):
        dataclasses.replace(
            cfg,
            train=dataclasses.replace(cfg.train, steps=8, num_iterations=2),
            reward=RewardConfig(max_at_k=2, max_at_k_steps=3),
        )


def test_exploration_options_reach_trl_and_its_entropy_control_runs(tiny_policy, tmp_path):
    """The exploration settings are GRPOConfig's own; with adaptive entropy control on, TRL logs
    its coefficient each step, raised while the entropy is below the target."""
    exploration = dict(
        epsilon_high=0.28,
        scale_rewards="batch",
        top_entropy_quantile=0.5,
        entropy_coef=0.01,
        use_adaptive_entropy=True,
        entropy_target=50.0,  # above any entropy: the coefficient rises every step
        entropy_coef_delta=0.01,
    )
    cfg = experiment(tiny_policy, steps=2, group_size=4, prompts_per_step=1, max_completion_length=64, **exploration)
    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "log.jsonl")
    assert {k: getattr(trainer.args, k) for k in exploration} == exploration
    assert trainer.args.epsilon == 0.2 and trainer.args.num_iterations == 1 and not trainer.args.sync_ref_model
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["entropy_coef"] for r in rows] == pytest.approx([0.02, 0.03])
    with pytest.raises(ValueError, match="beta > 0"):
        TrainConfig(sync_ref_model=True)


def test_gpu_options_refuse_to_run_without_cuda(tiny_policy, tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(RuntimeError, match="CUDA"):
        build_trainer(experiment(tiny_policy, use_vllm=True), tmp_path)
    with pytest.raises(RuntimeError, match="CUDA"):
        build_trainer(experiment(tiny_policy, use_unsloth=True), tmp_path)


def test_harness_reward_fills_the_archive_with_correct_kernels_only():
    from lab.rl.sqd import TechniqueArchive

    archives = {"dgemm": TechniqueArchive()}
    fn = HarnessReward("dgemm", RewardConfig(), FAST_REWARD, archives=archives)
    naive = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
    omp = (KERNELS / "legit" / "omp_collapse_dynamic.c").read_text()
    fn([f"Here:\n```c\n{naive}```", omp, omp, "no code"], permitted=[[], ["openmp"], [], []])
    assert [r.status for r in fn.last] == ["ok", "ok", "forbidden", "format_error"]
    assert fn.last[2].detail == "uses openmp, which the prompt did not permit"
    assert fn.last[2].compile_s == 0.0 and fn.last[1].compile_s > 0  # refused before compiling
    assert set(archives["dgemm"].cells()) == {"none", "openmp"}
    assert archives["dgemm"].elite_source(frozenset()) == naive  # the extracted kernel, not the prose
    assert fn.last_permitted == ["none", "openmp", "none", "none"]


def test_sqd_training_draws_prompts_from_the_schedule_and_logs_it(tiny_policy, tmp_path):
    from lab.policy.prompts import permitted_in

    cfg = experiment(
        tiny_policy,
        sqd=SQDConfig(steps_per_stage=1),
        steps=3,
        group_size=4,
        prompts_per_step=2,
        max_completion_length=64,
        save_steps=100,
    )
    seen = []

    def spy(completions, prompts, permitted, **kwargs):
        seen.append([(permitted_in(p[-1]["content"]), frozenset(s)) for p, s in zip(prompts, permitted)])
        return [0.0] * len(completions)

    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "log.jsonl", extra_reward_funcs=[spy])
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    # Prompts are drawn a step ahead: step 2's come from stage 1, step 3's from stage 2.
    assert [r["stage"] for r in rows] == [{"dgemm": 1}, {"dgemm": 1}, {"dgemm": 2}]
    assert trainer.sqd_schedule.stages() == {"dgemm": 3}  # no advance after the last step
    for row, batch in zip(rows, seen):
        assert all(stated == carried for stated, carried in batch)  # prompt text and reward agree
        assert len(row["permitted"]) == 2 and "coverage" in row["archive"]["dgemm"]
    # The stream is live: each step's permitted sets fit the stage its prompts were drawn in.
    for row, batch in zip(rows, seen):
        assert all(len(carried) <= row["stage"]["dgemm"] for _, carried in batch)
    assert [r["row"] for r in trainer.sqd_schedule.pending] == [6, 7]  # drawn ahead, never trained on


@pytest.mark.gpu
def test_last_checkpoint_skips_incomplete_ones(tmp_path):
    from lab.rl.train import last_checkpoint

    for step in (2, 10, 12):
        (tmp_path / f"checkpoint-{step}").mkdir()
    for name in ("trainer_state.json", "archive_state.json"):
        (tmp_path / "checkpoint-2" / name).write_text("{}")
    (tmp_path / "checkpoint-12" / "trainer_state.json").write_text("{}")  # cut off before the archive state
    assert last_checkpoint(tmp_path) == str(tmp_path / "checkpoint-2")  # checkpoint-10: cut off earlier


def _train_script(policy, out, steps: int, **extra) -> str:
    train = dict(steps=steps, group_size=4, prompts_per_step=1, max_completion_length=96, save_steps=2, **extra)
    return (
        "from lab.config import ExperimentConfig, MeasureConfig, SQDConfig, TrainConfig; "
        "from lab.rl.train import train; "
        f"train(ExperimentConfig(name='run', kind='grpo', model={str(policy)!r}, "
        f"measure={TINY_MEASURE!r}, "
        f"train=TrainConfig(**{train!r}), sqd=SQDConfig(steps_per_stage=1)), "
        f"{str(out)!r})"
    )


def test_resume_after_a_kill_finishes_with_complete_results(tiny_policy, tmp_path):
    """GRPO+SQD, whose resume carries the most state (the trainer's, the archive and its stage,
    the prompts drawn a step ahead): plain GRPO resumes through the same code, less the archive."""
    from lab.rl.train import last_checkpoint

    out = tmp_path / "run"
    script = _train_script(tiny_policy, out, steps=6)
    first = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while last_checkpoint(out) is None and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if first.poll() is None:
        os.killpg(first.pid, signal.SIGKILL)  # our own child's session only
    first.wait()
    resumed_from = last_checkpoint(out)
    assert resumed_from is not None, "no complete checkpoint was written"
    done = int(resumed_from.rsplit("-", 1)[1])
    before = (out / "train_log.jsonl").read_text().splitlines()[:done]
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, capture_output=True, timeout=300)
    lines = (out / "train_log.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5, 6]
    # Every scored completion once: the killed run's records past its checkpoint were dropped.
    scored = [json.loads(line) for line in (out / "training_samples.jsonl").read_text().splitlines()]
    batch = sum(rows[0]["status_counts"].values())
    assert [r["step"] for r in scored] == [s for s in range(1, 7) for _ in range(batch)]
    for row in rows:
        statuses = sorted(r["status"] for r in scored if r["step"] == row["step"])
        assert statuses == sorted(s for s, c in row["status_counts"].items() for _ in range(c))
    if done < 6:
        assert lines[:done] == before  # resumed: the steps the checkpoint covers were kept, not redone
    assert (out / "final" / "config.json").exists() and (out / "checkpoint-6").exists()
    saved = json.loads((out / "train_config.json").read_text())
    assert saved["train"]["steps"] == 6 and saved["measure"]["n"] == 48 and "results_dir" not in saved
    archive = json.loads((out / "archive.json").read_text())["dgemm"]
    assert {"coverage", "qd_score", "cells", "elites", "stage_history"} <= set(archive)
    # One stage per step, carried across the kill. Prompts are drawn a step ahead, so
    # step k's prompts come from the stage after step k-2; the resumed run replays the
    # prompts the killed one had drawn but not trained on. No advance after the last step.
    assert [r["stage"]["dgemm"] for r in rows] == [1, 1, 2, 3, 4, 5]
    assert [(h["step"], h["stage"]) for h in archive["stage_history"]] == [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 6),
    ]


def test_plain_grpo_resumes_on_the_prompts_it_had_not_trained_on(tiny_policy, tmp_path):
    """Plain GRPO reads a fixed, shuffled prompt list, so a resumed run must skip the batches its
    checkpoint covers (SQD's stream has nothing to skip). Cut back to checkpoint-1, step 2 runs
    again on the same prompt from the same random state: the same completions, scored once."""
    from lab.rl.train import train

    cfg = dataclasses.replace(
        experiment(tiny_policy, steps=2, group_size=4, prompts_per_step=1, max_completion_length=64, save_steps=1),
        name="run",
        runs_dir=str(tmp_path),
    )
    out = tmp_path / "run" / "s0"
    train(cfg)
    first = [json.loads(line) for line in (out / "training_samples.jsonl").read_text().splitlines()]
    for done in ("checkpoint-2", "final"):
        shutil.rmtree(out / done)  # as if killed after checkpoint-1
    (out / "archive.json").unlink()
    train(cfg)
    rows = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    again = [json.loads(line) for line in (out / "training_samples.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and [r["step"] for r in again] == [1] * 4 + [2] * 4
    assert [r["text_hash"] for r in again] == [r["text_hash"] for r in first]
    assert json.loads((out / "archive.json").read_text())["dgemm"]["stage_history"] is None


def test_a_run_killed_after_its_last_checkpoint_trains_no_more(tiny_policy, tmp_path):
    from lab.rl.train import train

    cfg = dataclasses.replace(
        experiment(
            tiny_policy,
            sqd=SQDConfig(steps_per_stage=1),
            steps=2,
            group_size=4,
            prompts_per_step=1,
            max_completion_length=64,
            save_steps=2,
        ),
        name="run",
        runs_dir=str(tmp_path),
    )
    out = tmp_path / "run" / "s0"  # the run_dir of seed 0: train's default output folder
    assert cfg.run_dir == out and train(cfg) == out / "final"
    log = (out / "train_log.jsonl").read_text()
    weights = (out / "final" / "model.safetensors").read_bytes()
    shutil.rmtree(out / "final")  # as if killed after checkpoint-2, before the final save
    (out / "archive.json").unlink()
    # Where results go and how the policy is evaluated afterwards do not change the training run.
    elsewhere = dataclasses.replace(
        cfg, name="renamed", results_dir=str(tmp_path / "res"), evaluation=EvaluationConfig(samples=3)
    )
    assert train(elsewhere, out) == out / "final"
    assert (out / "train_log.jsonl").read_text() == log and not (out / "checkpoint-3").exists()
    assert (out / "final" / "model.safetensors").read_bytes() == weights
    assert json.loads((out / "archive.json").read_text())["dgemm"]["stage_history"][-1]["step"] == 1
    with pytest.raises(ValueError, match="different training config.*differs in: train.learning_rate"):
        train(dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, learning_rate=1.0)))
    with pytest.raises(ValueError, match="different training config.*differs in: measure.n"):
        train(dataclasses.replace(cfg, measure=dataclasses.replace(cfg.measure, n=64)))


def test_suite_rows_are_drawn_by_weight_and_state_their_mode():
    from lab.config import SuiteEntry
    from lab.rl.train import suite_rows

    config = ExperimentConfig(
        suite=[SuiteEntry("dot", "serial", 3.0), SuiteEntry("histogram", "openmp", 1.0)],
        reward=RewardConfig(positive="log_speedup"),
        measure=MeasureConfig(threads=2),
        train=TrainConfig(steps=100, prompts_per_step=4),
    )
    rows = suite_rows(config)
    assert len(rows) == 400 and rows == suite_rows(config)  # seeded
    serial = [r for r in rows if r["mode"] == "serial"]
    assert 0.65 < len(serial) / len(rows) < 0.85 and all(r["problem"] == "dot" for r in serial)
    for r in rows:
        text = r["prompt"][0]["content"]
        assert f"{r['problem']}(int n" in text
        assert ("Execution model: serial" in text) == (r["mode"] == "serial")
        assert ("2 OpenMP threads" in text) == (r["mode"] == "openmp")


def test_training_runs_of_other_code_start_afresh(tmp_path, monkeypatch):
    """Checkpoints are reused only by the code that made them, as finished results are."""
    from lab.config import ExperimentConfig
    from lab.pipeline import runner as experiments  # the runner (lab.analysis.experiments before ba54b74)

    cfg = ExperimentConfig(
        name="g", kind="grpo", seeds=[0], results_dir=str(tmp_path / "r"), runs_dir=str(tmp_path / "runs")
    )
    trained = []

    def fake_train(run):  # records what the run folder held when training began
        trained.append(sorted(p.name for p in run.run_dir.iterdir()))
        (run.run_dir / "checkpoint-1").mkdir(exist_ok=True)
        return run.run_dir / "final"

    monkeypatch.setattr(experiments, "train", fake_train)
    monkeypatch.setattr(
        experiments,
        "_collect_training",
        lambda cfg, runs, warms: (cfg.out_dir / "training_samples.jsonl").write_text(""),
    )
    monkeypatch.setattr(experiments, "evaluate_policy", lambda *a, **k: {})
    monkeypatch.setattr(experiments, "learning_curve", lambda *a: None)
    monkeypatch.setattr(experiments, "config_changes", lambda *a: [])  # the training config is the same
    seed = cfg.for_seed(cfg.seeds[0])
    experiments.run_experiment(cfg)
    assert trained[-1] == [experiments.RUN_CODE]
    experiments.run_experiment(cfg, overwrite=False)  # same code: its checkpoints are kept
    assert "checkpoint-1" in trained[-1]
    (seed.run_dir / experiments.RUN_CODE).write_text("other-code\n")
    experiments.run_experiment(cfg)
    assert trained[-1] == [experiments.RUN_CODE]
    (seed.run_dir / experiments.RUN_CODE).unlink()  # of unknown code (made before the lab recorded it)
    experiments.run_experiment(cfg)
    assert trained[-1] == [experiments.RUN_CODE]


def test_a_kernel_far_above_its_runs_best_is_flagged_and_kept_to_be_read(tiny_policy, tmp_path, monkeypatch):
    from lab.harness.evaluate import EvalResult
    from lab.rl import train as train_module

    # Made-up verdicts (the harness is tested elsewhere): every kernel of step 1 runs at 10 GFLOPS;
    # in step 2 the first runs at 25 (2.5x the run's best: excessive), the rest at 15.
    calls = []

    def fake(texts, problem, config, **kwargs):
        calls.append(len(texts))
        rates = [10.0] * len(texts) if len(calls) == 1 else [25.0] + [15.0] * (len(texts) - 1)
        return [EvalResult(status="ok", gflops=g, speedup=g) for g in rates]

    monkeypatch.setattr(train_module, "evaluate_batch", fake)
    cfg = experiment(tiny_policy, steps=2, group_size=4, prompts_per_step=1, max_completion_length=32, save_steps=100)
    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "train_log.jsonl")
    trainer.train()
    scored = [json.loads(line) for line in (tmp_path / "training_samples.jsonl").read_text().splitlines()]
    assert [(r["step"], r["gflops"], r["excessive"]) for r in scored] == [
        (1, 10.0, False), (1, 10.0, False), (1, 10.0, False), (1, 10.0, False),
        (2, 25.0, True), (2, 15.0, False), (2, 15.0, False), (2, 15.0, False),
    ]  # fmt: skip
    (flagged,) = [json.loads(line) for line in (tmp_path / "excessive.jsonl").read_text().splitlines()]
    assert flagged["step"] == 2 and flagged["prior_best_gflops"] == 10.0 and flagged["factor"] == 2.0
    assert flagged["text"] == trainer.harness_reward.last_texts[0]  # the kernel itself, to be read
    # A resumed run's guard starts from the samples it kept: 25 is now the best to beat.
    from lab.rl.guard import ExcessiveGuard

    assert ExcessiveGuard.from_samples(2.0, scored).best == {("dgemm", scored[0]["mode"]): 25.0}
