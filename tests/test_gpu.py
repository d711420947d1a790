"""The GPU side of training: bf16, reporting and checkpoint limits reaching TRL, unsloth's
import order, the constraints file of the gpu extra, and scripts/gpu_check.sh.

Most tests run on CPU with a tiny untrained policy (built in a second, not trained); the one
marked `gpu` trains on CUDA and skips without it; the resolution of constraints/gpu.txt
against the package index runs only with LAB_CHECK_GPU_RESOLVE=1.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import re
import subprocess
import sys
import textwrap
import warnings

import pytest

from lab.config import EvaluationConfig
from lab.rl.train import TENSORBOARD_LOGS, build_trainer, import_unsloth_first, precision_and_reporting
from tests.conftest import ROOT
from tests.test_train import experiment


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


needs_cuda = pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU")
cpu_only = pytest.mark.skipif(_cuda(), reason="checks the CPU defaults")


@pytest.fixture(scope="module")
def untrained_policy(tmp_path_factory):
    """A seed-policy-shaped model folder (the lab's tokenizer and Llama config, random weights):
    enough for TRL to build a trainer and take steps, in about a second."""
    from transformers import LlamaForCausalLM, set_seed

    from lab.policy.seed_policy.corpus import make_corpus
    from lab.policy.seed_policy.pretrain import SeedConfig, model_config, train_tokenizer

    corpus = make_corpus(40, seed=0)
    tokenizer = train_tokenizer([e.prompt for e in corpus] + [e.completion for e in corpus], 512)
    set_seed(0)
    model = LlamaForCausalLM(
        model_config(tokenizer, SeedConfig(hidden_size=32, layers=1, heads=2, intermediate_size=64))
    )
    out = tmp_path_factory.mktemp("policy") / "untrained"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _length(completions, **kwargs):
    """A reward with spread whatever the harness says, so each step's update is real."""
    return [float(len(str(c))) / 100 for c in completions]


# --- CPU: what build_trainer hands TRL ---------------------------------------------------


@cpu_only
def test_cpu_trainer_keeps_fp32_no_reporting_and_every_checkpoint(untrained_policy, tmp_path):
    trainer = build_trainer(experiment(untrained_policy, steps=1, group_size=2, prompts_per_step=1), tmp_path / "run")
    args = trainer.args
    assert args.bf16 is False and args.report_to == [] and args.save_total_limit is None
    assert args.use_vllm is False and args.use_cpu is True


def test_the_reward_measures_where_compute_says(untrained_policy, tmp_path):
    """The trainer's reward scores on the config's compute (a Dask cluster here; building the
    trainer connects to nothing, the first reward call would)."""
    from lab.config import ComputeConfig
    from lab.harness.evaluate import evaluate_batch

    cluster = ComputeConfig(backend="dask", address="tcp://127.0.0.1:8786")
    cfg = dataclasses.replace(experiment(untrained_policy, steps=1, group_size=2, prompts_per_step=1), compute=cluster)
    scorer = build_trainer(cfg, tmp_path / "run").harness_reward._evaluate
    assert scorer.func is evaluate_batch and scorer.keywords["compute"] == cluster


def test_report_to_save_total_limit_and_vllm_mode_reach_grpo_config(untrained_policy, tmp_path, monkeypatch):
    """Checked on the arguments TRL's trainer is given (a stand-in records them, so the
    tensorboard package is not needed), including where TensorBoard would write."""
    import trl

    built = {}

    class Recorder:
        def __init__(self, *, args, **kwargs):
            built.update(args=args, tensorboard_dir=os.environ.get("TENSORBOARD_LOGGING_DIR"))

        def add_callback(self, callback):
            pass

    monkeypatch.setattr(trl, "GRPOTrainer", Recorder)
    monkeypatch.delenv("TENSORBOARD_LOGGING_DIR", raising=False)
    cfg = experiment(untrained_policy, steps=1, group_size=2, report_to=["tensorboard"])
    # A checkpoint limit needs the learning curve off (it evaluates every checkpoint).
    cfg = dataclasses.replace(
        cfg, evaluation=EvaluationConfig(curve_samples=0), train=dataclasses.replace(cfg.train, save_total_limit=2)
    )
    build_trainer(cfg, tmp_path / "run")
    args = built["args"]
    assert args.report_to == ["tensorboard"] and args.save_total_limit == 2
    assert args.vllm_mode == "colocate" and 0 < args.vllm_gpu_memory_utilization < 1
    assert built["tensorboard_dir"] == str(tmp_path / "run" / TENSORBOARD_LOGS)
    assert "TENSORBOARD_LOGGING_DIR" not in os.environ  # set only while the trainer was built


def test_tensorboard_logs_go_into_the_run_folder(untrained_policy, tmp_path):
    pytest.importorskip("tensorboard")
    from transformers.integrations import TensorBoardCallback

    trainer = build_trainer(experiment(untrained_policy, steps=1, group_size=2, report_to=["tensorboard"]), tmp_path)
    (callback,) = [c for c in trainer.callback_handler.callbacks if isinstance(c, TensorBoardCallback)]
    assert callback.logging_dir == str(tmp_path / TENSORBOARD_LOGS)


@cpu_only
def test_bf16_without_cuda_is_refused_in_one_line(untrained_policy, tmp_path):
    cfg = experiment(untrained_policy, steps=1, group_size=2, bf16=True)
    with pytest.raises(RuntimeError, match="bf16") as err:
        build_trainer(cfg, tmp_path)
    assert "\n" not in str(err.value)
    with pytest.raises(RuntimeError, match="bf16"):  # the warm start's SFTConfig takes the same arguments
        precision_and_reporting(cfg.train)
    assert precision_and_reporting(experiment(untrained_policy).train) == {"bf16": False, "report_to": []}


# --- unsloth's import order --------------------------------------------------------------


def _python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=240,
    )


def test_training_modules_do_not_import_transformers_or_trl():
    """Unsloth patches transformers, TRL and peft as it is imported, so it has to come first:
    the modules on the way to training (the `lab run` path included) must not load them."""
    proc = _python(
        """
        import sys
        import lab.pipeline.runner, lab.cli, lab.rl.reward, lab.rl.train, lab.rl.warm_start
        print(",".join(m for m in ("transformers", "trl", "peft") if m in sys.modules))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_build_trainer_imports_unsloth_before_trl(tmp_path):
    """With use_unsloth, unsloth is the first of them build_trainer imports. A stand-in unsloth
    reports what was loaded before it and stops there; CUDA is only pretended, so the check
    comes before anything needs a GPU."""
    (tmp_path / "unsloth.py").write_text(
        "import sys\n"
        "print('before unsloth:', [m for m in ('transformers', 'trl', 'peft') if m in sys.modules])\n"
        "raise RuntimeError('stand-in unsloth')\n"
    )
    proc = _python(
        """
        import torch
        torch.cuda.is_available = lambda: True
        from lab.config import ExperimentConfig, TrainConfig
        from lab.rl.train import build_trainer
        try:
            build_trainer(ExperimentConfig(name="x", kind="grpo", train=TrainConfig(use_unsloth=True)), "unused")
        except RuntimeError as err:
            print(err)
        """,
        PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["before unsloth: []", "stand-in unsloth"]


def test_unsloth_imported_after_transformers_warns(tmp_path):
    (tmp_path / "unsloth.py").write_text("")
    proc = _python(
        """
        import warnings
        import transformers
        from lab.rl.train import import_unsloth_first
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import_unsloth_first()
        print(caught[0].message)
        """,
        PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("transformers imported before unsloth")


def test_a_missing_unsloth_says_how_to_install():
    if "unsloth" in sys.modules or _has_unsloth():
        pytest.skip("unsloth is installed here")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers may already be loaded in this process
        with pytest.raises(RuntimeError, match=r"needs unsloth: pip install -e '\.\[gpu\]' -c constraints/gpu\.txt"):
            import_unsloth_first()


def _has_unsloth() -> bool:
    import importlib.util

    return importlib.util.find_spec("unsloth") is not None


# --- CUDA --------------------------------------------------------------------------------


@pytest.mark.gpu
@needs_cuda
def test_two_bf16_grpo_steps_on_cuda(untrained_policy, tmp_path):
    import torch

    if not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    cfg = experiment(untrained_policy, steps=2, group_size=4, prompts_per_step=1, max_completion_length=32, bf16=True)
    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "log.jsonl", extra_reward_funcs=[_length])
    assert trainer.args.bf16 is True and next(trainer.model.parameters()).is_cuda
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2] and all(math.isfinite(r["loss"]) for r in rows)
    assert torch.cuda.max_memory_allocated() > 0


@pytest.mark.gpu
@needs_cuda
def test_a_grpo_step_with_the_model_loaded_through_unsloth(untrained_policy, tmp_path):
    """use_unsloth on CUDA: unsloth is imported first, the model it loads sits on the GPU, and a
    step trains and logs a finite loss (test_build_trainer_imports_unsloth_before_trl checks the
    import order without a GPU)."""
    import torch

    pytest.importorskip("unsloth")
    cfg = experiment(
        untrained_policy, steps=1, group_size=4, prompts_per_step=1, max_completion_length=32, use_unsloth=True
    )
    trainer = build_trainer(cfg, tmp_path / "run", tmp_path / "log.jsonl", extra_reward_funcs=[_length])
    assert "unsloth" in sys.modules and next(trainer.model.parameters()).is_cuda
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1] and math.isfinite(rows[0]["loss"])
    assert torch.cuda.max_memory_allocated() > 0


# --- the install and the check script ----------------------------------------------------


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints" / "gpu.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[_normalized(name)] = version
    return pins


def test_gpu_constraints_pin_inside_the_core_ranges():
    """The pins must not contradict the project's own dependency ranges (pip would refuse)."""
    import tomllib

    from packaging.requirements import Requirement

    core = {}
    for text in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        req = Requirement(text)
        core[_normalized(req.name)] = req.specifier
    pins = _pins()
    assert {"torch", "transformers", "trl", "unsloth", "unsloth-zoo", "vllm", "peft", "accelerate"} <= set(pins)
    for name, version in pins.items():
        if name in core:
            assert core[name].contains(version, prereleases=True), f"{name}=={version} is outside {core[name]}"


@pytest.mark.skipif(
    os.environ.get("LAB_CHECK_GPU_RESOLVE") != "1", reason="set LAB_CHECK_GPU_RESOLVE=1 (package index)"
)
@pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() != "x86_64", reason="the constraints are for Linux x86-64"
)
@pytest.mark.timeout(1800)
def test_gpu_extra_resolves_with_the_constraints(tmp_path):
    """pip resolves `.[gpu]` under constraints/gpu.txt as a fresh CUDA machine would: this
    machine's pip configuration (local CPU-only torch wheels, global constraints) is left out,
    so torch is the index's CUDA build. Downloads metadata, installs nothing."""
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_NO_INDEX")}
    env["PIP_CONFIG_FILE"] = os.devnull
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        + ["--report", str(report), "-e", f"{ROOT}[gpu]", "-c", str(ROOT / "constraints" / "gpu.txt")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    resolved = {
        _normalized(i["metadata"]["name"]): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]
    }
    assert {name: resolved.get(name) for name in _pins()} == _pins()
    assert "+cpu" not in resolved["torch"]


@cpu_only
def test_gpu_check_without_cuda_exits_2_in_one_line():
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh")], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert (proc.stdout + proc.stderr).strip() == "gpu_check: no CUDA device here"


def test_gpu_check_variants_are_valid_configs():
    """Each variant of the check is the smoke `grpo` experiment with bf16 and its own switches."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    switches = {}
    for variant in gpu_check.VARIANTS:
        t = gpu_check.variant_config(variant, 5).train
        assert t.steps == 5 and t.bf16 is True
        switches[variant] = (t.use_unsloth, t.use_vllm)
    assert switches == {
        "plain": (False, False),
        "unsloth": (True, False),
        "vllm": (False, True),
        "unsloth_vllm": (True, True),
    }
