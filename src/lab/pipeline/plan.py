"""The order a config's arms run in, and the notebook that runs each: one place for `lab run`,
the Makefile and the tests.

    arm_order(config)              # ["baseline", "grpo", "grpo_sqd", "grpo_rft"]: the file's order
    notebook_plan(config)          # [Step("01_baseline", {"experiment": "baseline"}), ..., Step("04_figures", {})]

A config's experiments run in the order its file lists them (a later arm may compare itself
with an earlier one; none depends on another's results). `notebook_plan` maps each arm to the
notebook that presents it: the base policy to 01_baseline, a GRPO arm to 02_grpo, a GRPO+SQD
arm to 03_grpo_sqd, each with the arm's name as its `experiment` parameter, then 04_figures
for the whole config; a suite config is one run of 05_suite. `lab run --config F --notebooks
DIR` executes that plan with papermill, which is what `make reproduce` and `make smoke` do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lab.analysis.compare import generations
from lab.config import ExperimentConfig, LabConfig
from lab.rl.warm_start import demonstration_records

#: The notebooks, by what they present.
BASELINE, GRPO, GRPO_SQD, FIGURES, SUITE = "01_baseline", "02_grpo", "03_grpo_sqd", "04_figures", "05_suite"


@dataclass(frozen=True)
class Step:
    """One notebook run: notebooks/<notebook>.ipynb with `parameters` (and the config path)."""

    notebook: str
    parameters: dict = field(default_factory=dict)

    @property
    def output_name(self) -> str:
        """The executed notebook's file name: the notebook, and the arm when it presents one."""
        arm = self.parameters.get("experiment")
        return f"{self.notebook}.ipynb" if arm is None else f"{self.notebook}-{arm}.ipynb"


def arm_order(config: LabConfig) -> list[str]:
    """The experiments of a config, in the order they run: the order of the file."""
    return list(config.experiments)


def notebook_of(cfg: ExperimentConfig) -> str:
    """The notebook that presents one single-problem arm."""
    if cfg.kind == "baseline":
        return BASELINE
    return GRPO_SQD if cfg.sqd is not None else GRPO


def notebook_plan(config: LabConfig) -> list[Step]:
    """Every notebook run that presents a config, in order."""
    arms = [config.experiments[name] for name in arm_order(config)]
    if any(arm.suite is not None for arm in arms):
        return [Step(SUITE)]
    return [Step(notebook_of(arm), {"experiment": arm.name}) for arm in arms] + [Step(FIGURES)]


def run_notebooks(config: LabConfig, config_path: str | Path, out_dir: str | Path, cwd: str | Path) -> list[Path]:
    """Execute `notebook_plan(config)` with papermill, each notebook from notebooks/ under `cwd`
    with the config's path, into `out_dir`; returns the executed notebooks."""
    import papermill as pm  # here: it takes seconds to import, and only this command needs it

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for step in notebook_plan(config):
        target = out / step.output_name
        print(f"running notebooks/{step.notebook}.ipynb -> {target}", flush=True)
        pm.execute_notebook(
            str(Path(cwd) / "notebooks" / f"{step.notebook}.ipynb"),
            str(target),
            parameters={"config": str(config_path), **step.parameters},
            cwd=str(cwd),
            log_output=True,
            progress_bar=False,
            request_save_on_cell_execute=True,
        )
        done.append(target)
    return done


#: Seconds per fresh evaluation assumed where no harness benchmark (make bench-harness) of any
#: machine is at hand: the order of a compile, check and timing of one kernel on 2 cores.
ASSUMED_EVAL_S = 1.0


def reward_evaluations(cfg: ExperimentConfig) -> dict[str, int]:
    """The kernels an experiment measures, by part of the run (cached repeats included: an upper bound)."""
    seeds, entries = len(cfg.seeds), len(cfg.entries)
    trained = cfg.kind == "grpo"
    checkpoints = (cfg.train.steps - 1) // cfg.train.save_steps if trained else 0  # the last step's is the final
    curve_points = (1 + (cfg.warm_start is not None) + checkpoints) if trained and cfg.evaluation.curve_samples else 0
    return {
        "training": seeds * generations(cfg) * cfg.train.batch_size if trained else 0,
        "warm_start": seeds * warm_start_evaluations(cfg),
        "evaluation": seeds * entries * (cfg.evaluation.samples + cfg.evaluation.restricted_samples),
        "learning_curve": seeds * entries * cfg.evaluation.curve_samples * curve_points,
    }


def warm_start_evaluations(cfg: ExperimentConfig) -> int:
    """The kernels one seed's warm start scores: its samples and, with demonstrations, the
    generator's sweep, for each (problem, mode) of the experiment (0 without a warm start)."""
    if cfg.warm_start is None:
        return 0
    shown = [
        len(demonstration_records(e.problem, e.mode, cfg.measure.threads, cfg.seed))
        if cfg.warm_start.demonstrations
        else 0
        for e in cfg.entries
    ]
    return len(cfg.entries) * cfg.warm_start.samples + sum(shown)


def eval_seconds(results_dir: str | Path, machine: str) -> tuple[float, str]:
    """(seconds per candidate, where the figure comes from): the harness benchmark of this machine
    (in its results folder), else that of the results folder `results_dir` lies in (another
    machine's, said so), else ASSUMED_EVAL_S."""
    from lab.files import read_json
    from lab.results import machine_results_dir, recorded_class, results_root

    base = results_root(results_dir) or Path(results_dir)
    for path in (machine_results_dir(base, machine) / "bench_harness.json", base / "bench_harness.json"):
        if path.exists():
            bench = read_json(path)
            theirs = recorded_class(bench)
            where = f"{path}" + ("" if theirs == machine else f" (measured on machine {theirs}, not this one)")
            return float(bench["per_candidate_s"]), where
    return ASSUMED_EVAL_S, "an assumed second per kernel (no make bench-harness result)"


def run_cost(config: LabConfig, machine: str) -> dict:
    """What running a config costs: reward evaluations per arm and part, and the minutes their
    measuring alone takes at this machine's rate (sampling and training steps come on top)."""
    seconds, source = eval_seconds(config.results_dir, machine)
    arms = {name: reward_evaluations(config.experiments[name]) for name in arm_order(config)}
    total = sum(sum(parts.values()) for parts in arms.values())
    return {
        "arms": arms,
        "reward_evaluations": total,
        "seconds_per_evaluation": seconds,
        "rate_from": source,
        "measuring_minutes": round(total * seconds / 60, 1),
    }
