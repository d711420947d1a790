"""Where a config's results live on this machine, and reading finished ones.

    config = open_config("configs/default.yaml")      # relative paths from the repository root
    load_results(config.results_dir)                 # {arm: {"config", "metrics", "samples", ...}}

Results are per machine class (lab.harness.machine.machine_class). A results folder belongs
to the machine its `machine.json` (the calibration `lab calibrate` writes) was measured on;
a machine of another class writes beside those results, under `machines/<its class>/` with the
same layout, and never over them. `open_config` points a config's `results_dir` and
`figures_dir` at this machine's folder, so the runner, the comparisons and the figures all
read and write the results of the machine they run on; `machine_results_dir` says where that
is. The layout of one arm's folder is lab.pipeline.runner's.

Placed between the harness (which says what this machine is) and the layers that make or
read results; it neither measures nor trains.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import os
from pathlib import Path

from lab.config import ConfigError, LabConfig, load_config
from lab.files import read_json, read_jsonl
from lab.harness import target
from lab.harness.machine import machine_class
from lab.harness.problems import BadProblem, UnknownProblem, load_problem
from lab.provenance import git_facts, measurement_version, policy_sha256

TRAINING_SAMPLES = "training_samples.jsonl"  # every completion scored in training, beside the metrics
EXCESSIVE = "excessive.jsonl"  # the kernels of training flagged far above their run's best, whole (lab.rl.guard)
RESTRICTED_SAMPLES = "samples_restricted.jsonl"  # the technique-restricted evaluation, beside samples.jsonl
MACHINES = "machines"  # results of other machine classes: <results_dir>/machines/<class>/
CALIBRATION = "machine.json"  # the calibration that says whose a results folder is

#: config.json entries that describe the run, not the experiment: never compared.
RUN_FACTS = frozenset(
    {
        "code",
        "measurement",
        "git_commit",
        "dirty",
        "machine",
        "machine_class",
        "target",  # part of the machine class, which reuse compares
        "policy_sha256",
        "packages",
        "date",
        "isolation",
        "train_prompts",
        "compute",  # where it was measured: each sample records its host and machine
        "results_dir",  # where results and checkpoints go, not what they are
        "runs_dir",
        "seed",  # one run's seed, set from `seeds`
    }
)


def report_provenance(model: str | None = None) -> dict:
    """What made a result, as every result file records it (`provenance` in a report, the top
    level of an arm's config.json): measurement version, commit and dirty flag, machine class,
    the policy's weights sha256 (None without a local policy) and the date. `lab status` judges
    a result by it (lab.pipeline.reuse)."""
    git = git_facts()
    return {
        "measurement": measurement_version(),
        "git_commit": git["commit"],
        "dirty": git["dirty"],
        "machine_class": machine_class(),
        "target": target.current(),
        "policy_sha256": policy_sha256(model) if model else None,
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "packages": _versions(),  # recorded, not compared: a result says what it ran under
    }


#: The libraries whose versions every result records.
PACKAGES = ("numpy", "torch", "transformers", "trl", "threadpoolctl")


def _versions() -> dict[str, str | None]:
    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {name: version(name) for name in PACKAGES}


def recorded_class(record: dict) -> str | None:
    """The machine class a result file names: its own `machine_class` (an arm's config.json; the
    workers' class after a cluster run), its provenance's (a report), else the fingerprint of
    its machine summary or of a calibration (files written before classes were recorded)."""
    provenance = record.get("provenance") if isinstance(record.get("provenance"), dict) else {}
    machine = record.get("machine") if isinstance(record.get("machine"), dict) else {}
    return (
        record.get("machine_class")
        or provenance.get("machine_class")
        or machine.get("class")
        or machine.get("fingerprint")
        or record.get("fingerprint")
    )


def recorded_target(record: dict) -> str | None:
    """The ISA tier (lab.harness.target) a result file names: its own `target` or its provenance's
    or machine summary's, else the tier a forced class names (`<fingerprint>-<tier>`); None for a
    file written before tiers were recorded."""
    provenance = record.get("provenance") if isinstance(record.get("provenance"), dict) else {}
    machine = record.get("machine") if isinstance(record.get("machine"), dict) else {}
    named = record.get("target") or provenance.get("target") or machine.get("target")
    if named:
        return named
    suffix = (recorded_class(record) or "").rpartition("-")[2]
    return suffix if suffix in target.TIERS else None


def results_owner(results_dir: str | Path) -> str | None:
    """The machine class a results folder belongs to: that of its calibration (None: none yet)."""
    path = Path(results_dir) / CALIBRATION
    if not path.is_file():
        return None
    try:
        saved = read_json(path)
    except ValueError:
        return None
    return recorded_class(saved) if isinstance(saved, dict) else None


def results_root(path: str | Path) -> Path | None:
    """The results folder at or above `path` that has a calibration (machine.json), if any."""
    here = Path(path).absolute()
    return next((folder for folder in (here, *here.parents) if (folder / CALIBRATION).is_file()), None)


def machine_results_dir(results_dir: str | Path, machine: str | None = None) -> Path:
    """This machine's (or `machine`'s) folder for what `results_dir` holds: `results_dir` itself
    when the results folder it lies in (the nearest one above it with a calibration) is this
    machine's or nobody's yet, else the same place under that folder's `machines/<class>/`
    (results/ablation -> results/machines/<class>/ablation)."""
    machine = machine or machine_class()
    given = Path(results_dir)
    if MACHINES in given.parts:  # already a machine's folder
        return given
    root = results_root(given)
    if root is None or results_owner(root) == machine:
        return given
    mine = root / MACHINES / machine / given.absolute().relative_to(root)
    return Path(os.path.relpath(mine)) if not given.is_absolute() else mine


def machine_path(path: str | Path, machine: str | None = None) -> Path:
    """A result file's path (results/sqd_study.json) moved to this machine's folder, as
    machine_results_dir moves a folder."""
    path = Path(path)
    return machine_results_dir(path.parent, machine) / path.name


def project_dir(config_path: str | Path) -> Path:
    """The folder a config's relative paths are relative to: the nearest folder above the
    config file that holds pyproject.toml (the repository root), else the current one."""
    for folder in Path(config_path).resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    return Path.cwd()


def find_config(config_path: str | Path) -> Path:
    """The config file: as given, or (a relative path not found here) in the nearest folder above
    the current one that has it, as for a notebook that JupyterLab runs inside notebooks/."""
    path = Path(config_path)
    if path.is_absolute() or path.exists():
        return path.resolve()
    return next((folder / path for folder in Path.cwd().parents if (folder / path).is_file()), path.resolve())


def check_problems(config: LabConfig) -> None:
    """Every problem a config names loads (exists, its training and held-out phrasings do not
    overlap...), else ConfigError with the config file and the problem's one-line reason."""
    for cfg in config.experiments.values():
        for entry in cfg.entries:
            try:
                load_problem(entry.problem)
            except (UnknownProblem, BadProblem) as err:
                raise ConfigError(f"{config.path}: experiments.{cfg.name}: {err}") from None


def open_config(config_path: str | Path, overrides: list[str] | tuple = (), machine: str | None = None) -> LabConfig:
    """Load a config file, move to its project folder (so that its relative paths mean the same
    from a notebook in notebooks/ as from the repository root, where make and papermill run)
    and point its results and figures at this machine's folder (or `machine`'s)."""
    path = find_config(config_path)
    config = load_config(path, overrides)
    check_problems(config)
    os.chdir(project_dir(path))
    experiments = {
        name: dataclasses.replace(cfg, results_dir=str(machine_results_dir(cfg.results_dir, machine)))
        for name, cfg in config.experiments.items()
    }
    return dataclasses.replace(
        config,
        experiments=experiments,
        results_dir=str(machine_results_dir(config.results_dir, machine)),
        figures_dir=str(machine_results_dir(config.figures_dir, machine)),
    )


def is_finished(out_dir: Path) -> bool:
    """True if `out_dir` holds the metrics of a run that finished (whatever made it)."""
    path = Path(out_dir) / "metrics.json"
    return path.exists() and read_json(path).get("complete") is True


def load_results(results_dir: str | Path = "results") -> dict[str, dict]:
    """Every finished experiment under results_dir: {name: {"config", "metrics", "samples", "train_log",
    "training_samples", "learning_curve"}}."""
    out = {}
    for metrics_path in sorted(Path(results_dir).glob("*/metrics.json")):
        metrics = read_json(metrics_path)
        if not metrics.get("complete"):
            continue
        folder = metrics_path.parent
        config = folder / "config.json"
        curve = folder / "learning_curve.json"
        out[folder.name] = {
            "config": read_json(config) if config.exists() else {},
            "metrics": metrics,
            "samples": read_jsonl(folder / "samples.jsonl"),
            "train_log": read_jsonl(folder / "train_log.jsonl", missing_ok=True),
            "training_samples": read_jsonl(folder / TRAINING_SAMPLES, missing_ok=True),
            "learning_curve": read_json(curve) if curve.exists() else None,
        }
    return out
