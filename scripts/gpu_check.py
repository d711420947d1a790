"""GPU check: a short GRPO run on a CUDA machine with plain TRL, unsloth and vLLM, timed.

    scripts/gpu_check.sh                                  (from the repository root)
    scripts/gpu_check.sh --steps 5 --variants plain,vllm  (a subset)

The environment needs the gpu extra (`pip install -e ".[gpu]" -c constraints/gpu.txt`,
docs/gpu.md). Each variant trains the smoke seed policy (models/seed-policy-smoke, built
here with `lab seed-model --preset smoke` when missing: nothing is downloaded) for `--steps`
steps of configs/smoke.yaml's `grpo` experiment through lab.rl.train.train, with
`train.bf16: true` and the variant's `--set` overrides:

    plain          TRL's GRPOTrainer on transformers' model
    unsloth        train.use_unsloth: true (the model loaded through unsloth)
    vllm           train.use_vllm: true (TRL generates with vLLM, colocated)
    unsloth_vllm   both, as configs/paper.yaml sets them

Each variant runs in a process of its own: unsloth must be imported before transformers
and TRL, which an earlier variant would already have loaded, and a crash or a vLLM engine
holding GPU memory must not take the next variant with it. A variant that fails is recorded
with the tail of its log (runs/gpu_check/<variant>.log) and the others still run.

results/gpu_check.json gets, per variant: status, wall time, each step's time split into
generation, reward and update (train_log.jsonl), and peak GPU memory (the process's
torch.cuda.max_memory_allocated, and the device's memory in use at the end, which counts
what vLLM holds outside torch's allocator); for the whole check: the GPU, CUDA and the
versions of torch, TRL, transformers, unsloth and vLLM. Exit status: 0 when every variant
trained, 1 when one failed, 2 (one line, nothing written) without a CUDA device.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = "configs/smoke.yaml"
EXPERIMENT = "grpo"
MODEL = "models/seed-policy-smoke"  # configs/smoke.yaml's model
RUNS = Path("runs/gpu_check")
#: Each variant's settings on top of the smoke config (the `--set` overrides of `lab run`).
VARIANTS = {
    "plain": [],
    "unsloth": ["train.use_unsloth=true"],
    "vllm": ["train.use_vllm=true"],
    "unsloth_vllm": ["train.use_unsloth=true", "train.use_vllm=true"],
}
PACKAGES = ("torch", "trl", "transformers", "unsloth", "unsloth_zoo", "vllm", "peft", "accelerate")
VARIANT_TIMEOUT_S = 1800  # vLLM's first start compiles kernels; a hung variant must not stall the rest


def variant_config(variant: str, steps: int):
    """The experiment config one variant trains: the smoke `grpo` experiment for `steps`
    steps in bf16, one checkpoint at the end, its runs under runs/gpu_check."""
    from lab.config import load_config

    overrides = [
        f"train.steps={steps}",
        f"train.save_steps={steps}",
        "train.bf16=true",
        f"runs_dir={RUNS}",
        f"results_dir={RUNS / 'results'}",
        "seeds=[0]",
        *VARIANTS[variant],
    ]
    return load_config(ROOT / CONFIG, overrides).experiment(EXPERIMENT)


def versions() -> dict[str, str | None]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_variant(variant: str, steps: int, result_path: Path) -> None:
    """In the child process: train one variant and write what it measured to `result_path`."""
    config = variant_config(variant, steps)
    if config.train.use_unsloth:
        from lab.rl.train import import_unsloth_first

        import_unsloth_first()  # train() would too; here it is plainly the first thing that runs
    import torch

    from lab.files import read_jsonl, write_json
    from lab.rl.train import resolve_bf16, train

    out = RUNS / variant
    shutil.rmtree(out, ignore_errors=True)  # a fresh run: an equal config would only resume
    torch.cuda.reset_peak_memory_stats()
    start = time.monotonic()
    train(config, out)
    wall = time.monotonic() - start
    free, total = torch.cuda.mem_get_info()
    keys = ("step", "step_s", "generation_s", "reward_s", "update_s", "loss", "reward")
    steps_run = [{k: row.get(k) for k in keys} for row in read_jsonl(out / "train_log.jsonl")]
    # The first step pays for compilation and warm-up; the mean after it is the steady rate.
    later = [s["step_s"] for s in steps_run[1:] if s["step_s"] is not None]
    write_json(
        result_path,
        {
            "status": "ok",
            "settings": VARIANTS[variant],
            "bf16": resolve_bf16(config.train.bf16),
            "train_s": wall,
            "steps": steps_run,
            "mean_step_s_after_first": sum(later) / len(later) if later else None,
            "peak_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_memory_reserved_bytes": torch.cuda.max_memory_reserved(),
            "device_memory_used_bytes": total - free,
        },
    )


_GPU_INFO = """
import json, torch
p = torch.cuda.get_device_properties(0)
print(json.dumps({
    "gpu": torch.cuda.get_device_name(0),
    "gpu_memory_bytes": p.total_memory,
    "compute_capability": f"{p.major}.{p.minor}",
    "cuda": torch.version.cuda,
    "bf16_supported": torch.cuda.is_bf16_supported(including_emulation=False),
}))
"""


def gpu_info() -> dict:
    """The GPU, from a process of its own: querying it here would hold a CUDA context (memory
    on the device) through every variant's run."""
    proc = subprocess.run([sys.executable, "-c", _GPU_INFO], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _tail(path: Path, lines: int = 25) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def check(variants: list[str], steps: int, out_json: Path) -> int:
    import torch

    # is_available asks the driver without creating a CUDA context in this process.
    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device here", file=sys.stderr)
        return 2
    if not (ROOT / MODEL / "config.json").exists():
        print(f"gpu_check: building {MODEL}", flush=True)
        subprocess.run(
            [sys.executable, "-m", "lab.cli", "seed-model", "--preset", "smoke", "--out", MODEL], cwd=ROOT, check=True
        )
    record = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        **gpu_info(),
        "versions": versions(),
        "config": CONFIG,
        "experiment": EXPERIMENT,
        "steps": steps,
        "variants": {},
    }
    (ROOT / RUNS).mkdir(parents=True, exist_ok=True)
    for variant in variants:
        log = ROOT / RUNS / f"{variant}.log"
        result = ROOT / RUNS / f"{variant}.json"
        result.unlink(missing_ok=True)
        print(f"gpu_check: {variant} ({' '.join(VARIANTS[variant]) or 'plain TRL'}), log {log}", flush=True)
        start = time.monotonic()
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", variant, "--steps", str(steps)]
        cmd += ["--result", str(result)]
        with log.open("w") as sink:
            # A session of its own: on a timeout the whole group goes, vLLM's engine processes too.
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                code: int | str = proc.wait(timeout=VARIANT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code = "timeout"
        entry = {"wall_s": time.monotonic() - start, "log": str(RUNS / f"{variant}.log")}
        if code == 0 and result.exists():
            entry.update(json.loads(result.read_text()))
        else:
            entry.update(status="failed", exit=code, settings=VARIANTS[variant], error=_tail(log))
        record["variants"][variant] = entry
        print(f"gpu_check: {variant}: {entry['status']} in {entry['wall_s']:.0f} s", flush=True)
        # Written after every variant, so a check cut off midway keeps what it measured.
        out_json.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(record, indent=2) + "\n")
    print(f"gpu_check: wrote {out_json}")
    return 0 if all(v["status"] == "ok" for v in record["variants"].values()) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="GRPO steps per variant")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    parser.add_argument("--out", default="results/gpu_check.json", help="the JSON record (relative: to the root)")
    parser.add_argument("--child", choices=list(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # the config's relative paths (model, runs) are the repository's
    if args.child:
        run_variant(args.child, args.steps, Path(args.result))
        return 0
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants or args.steps < 1:
        parser.error(f"--variants: choose from {', '.join(VARIANTS)}; --steps: at least 1")
    return check(variants, args.steps, ROOT / args.out)


if __name__ == "__main__":
    sys.exit(main())
