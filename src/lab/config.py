"""The lab's one config tree: typed, validated, loaded from YAML with inheritance.

    cfg = load_config("configs/default.yaml", overrides=["train.steps=10"])
    exp = cfg.experiment("grpo")          # an ExperimentConfig, every field resolved
    exp.train.learning_rate, exp.measure.threads

A config file holds settings shared by all its experiments, an `experiments` section
that names each experiment with what it changes, and optionally `defaults`, a file
(or list of files, relative to this one) whose settings this one starts from:

    defaults: default.yaml        # start from default.yaml, then apply what follows
    train:
      steps: 2                    # every experiment trains 2 steps
    experiments:
      grpo_sqd:
        sqd: {steps_per_stage: 1} # only grpo_sqd changes its SQD schedule

Merging is by key: mappings merge key by key, anything else (numbers, text, lists,
null) replaces; an experiment set to null (`grpo_rft: null`) is dropped. An experiment's settings are the shared ones with its own entry
merged on top. `--set key.path=value` on the command line is one more layer on top
(`train.steps=5` for every experiment, `experiments.grpo.train.steps=5` for one).

Validation is strict: an unknown or misspelt key, a wrong type or an out-of-range value
raises `ConfigError` with one line naming the file, the key path and what was expected.
Settings that describe how a kernel is measured live in `measure` only, and are the
same for the rewards in training and for evaluation.

This module is the bottom layer: plain data, imported by every other layer.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import typing
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

#: Every config class rejects unknown keys; values keep their type (no "3" for 3).
_STRICT = ConfigDict(extra="forbid")

PositiveInt = Annotated[StrictInt, Field(ge=1)]
NonNegativeFloat = Annotated[StrictFloat, Field(ge=0)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0)]
PositiveFloat = Annotated[StrictFloat, Field(gt=0)]

#: The statuses every evaluated completion ends in (see lab.harness.evaluate).
STATUSES = (
    "ok",
    "format_error",
    "forbidden",
    "compile_error",
    "timeout",
    "runtime_error",
    "wrong_result",
    "suspicious",  # passed the checks, but faster than this machine can be (lab.harness.plausibility)
    "harness_error",  # the harness failed, not the candidate: never cached, see RewardConfig.harness_error
)
#: The statuses of a kernel the harness compiled and ran: its numbers, or how it failed, came
#: from the machine (what the SQD study counts as a measured kernel).
RAN_STATUSES = frozenset({"ok", "timeout", "runtime_error", "wrong_result", "suspicious"})


#: The execution models every problem is measured in (see MeasureConfig.mode).
Mode = Literal["serial", "openmp"]
MODES: tuple[str, ...] = get_args(Mode)


class ConfigError(ValueError):
    """A config that cannot be used; the message is one line: file, key path, what was expected."""


@dataclass(frozen=True, config=_STRICT)
class MeasureConfig:
    """How a kernel is measured: the same settings for training rewards and for evaluation."""

    n: PositiveInt | None = None  # timed size; None = the problem's timed_n for the mode (its default_n unless set)
    odd_n: PositiveInt | None = None  # the odd size every kernel is also checked at; None = the problem's
    # The execution model: `serial` (1 thread, any OpenMP construct, omp.h or runtime call is
    # `forbidden`) or `openmp` (`threads` threads, OpenMP permitted).
    mode: Mode = "openmp"
    threads: PositiveInt = 1  # OpenMP threads = CPUs reserved for each run
    min_time_s: PositiveFloat = 0.2  # timed calls continue until their sum reaches this...
    min_reps: PositiveInt = 5  # ...and at least this many were made (the time is their median)
    baseline: StrictBool = True  # also time the textbook baseline, so results carry a speedup
    baseline_min_time_s: PositiveFloat = 0.1
    compile_timeout_s: PositiveFloat = 60.0
    run_timeout_s: PositiveFloat = 30.0
    memory_mb: PositiveInt = 1024  # memory of the kernel's process (the run's cgroup adds the measurer's share)
    # Also build each kernel without auto-vectorization, so its object shows whether the code itself
    # asks for SIMD (EvalResult.object_facts; one more compile per kernel).
    verify_techniques: StrictBool = False

    def __post_init__(self):
        if self.mode == "serial" and self.threads != 1:
            raise ValueError(f"serial mode runs on 1 thread (threads: {self.threads})")

    @property
    def openmp(self) -> bool:
        return self.mode == "openmp"

    def for_mode(self, mode: str | None) -> MeasureConfig:
        """These settings for one execution model: serial runs on 1 thread, OpenMP on `threads`
        (None: as they are)."""
        if mode is None or mode == self.mode:
            return self
        return dataclasses.replace(self, mode=mode, threads=1 if mode == "serial" else self.threads)


def _default_penalties() -> dict[str, float]:
    # The paper's tiers: format/library violation, then compile, timeout, crash, wrong answer.
    return {
        "format_error": -100.0,
        "forbidden": -100.0,
        "compile_error": -40.0,
        "timeout": -30.0,
        "runtime_error": -20.0,
        "wrong_result": -10.0,
        "suspicious": -10.0,  # like a wrong result: the numbers cannot be believed
    }


@dataclass(frozen=True, config=_STRICT)
class RewardConfig:
    """The reward of each status: a penalty per failure, a performance term for `ok`."""

    penalties: dict[StrictStr, StrictFloat] = field(default_factory=_default_penalties)
    # gflops: the paper's choice; rank: each completion's standing within its GRPO group (lab.rl.reward)
    positive: Literal["gflops", "speedup", "log_speedup", "rank"] = "gflops"
    # A `harness_error` is the harness's fault, not the policy's: by default it gets the mean reward
    # of the other completions of its prompt, so its advantage is zero; or a fixed number.
    harness_error: Literal["group_mean"] | StrictFloat = "group_mean"
    # A correct kernel's performance term grows by this share when no other correct kernel of
    # its batch (same problem) uses its set of techniques, less as more of them do: a bonus for
    # rare technique sets, read from the compiled object where it can tell (lab.rl.reward).
    rarity_bonus: NonNegativeFloat = 0.0
    # max@k (None: off): each group's rewards become each row's share of the group's expected
    # best of k (lab.rl.reward.max_at_k), so GRPO climbs the best of k samples instead of their
    # mean: in a group that found a fast kernel, a sure loop kernel is no longer pushed up.
    max_at_k: Annotated[StrictInt, Field(ge=2)] | None = None
    # max@k only for GRPO's first this many steps, then the plain reward (None: every step): max@k
    # finds and keeps the fast family but values a correct kernel only as a best of k, so the
    # policy it leaves writes it less reliably; the plain mean after it asks for reliability.
    max_at_k_steps: PositiveInt | None = None

    def __post_init__(self):
        if self.max_at_k_steps is not None and self.max_at_k is None:
            raise ValueError("reward.max_at_k_steps says how long max@k lasts: set reward.max_at_k too")
        scored = set(STATUSES) - {"ok", "harness_error"}
        missing = scored - set(self.penalties)
        unknown = set(self.penalties) - scored
        if missing or unknown:
            raise ValueError(
                f"penalties must name each failure status exactly: missing {sorted(missing)}, unknown {sorted(unknown)}"
            )

    def __hash__(self):
        return hash(
            (
                tuple(sorted(self.penalties.items())),
                self.positive,
                self.harness_error,
                self.rarity_bonus,
                self.max_at_k,
                self.max_at_k_steps,
            )
        )

    def at_step(self, step: int) -> RewardConfig:
        """The reward in force at GRPO step `step` (0-based, TRL's global_step while the step's
        completions are scored): without max@k once `max_at_k_steps` have passed."""
        if self.max_at_k_steps is None or step < self.max_at_k_steps:
            return self
        return dataclasses.replace(self, max_at_k=None, max_at_k_steps=None)


@dataclass(frozen=True, config=_STRICT)
class SQDConfig:
    """Staged Quality-Diversity: stage schedule and sampling bias (our reading; see lab.rl.sqd)."""

    # Stages: "size" permits every subset of at most `stage` techniques (the first reading);
    # "cumulative" permits every subset of the first techniques of `order`, `start` of them in
    # stage 1 and one more per stage (a curriculum from what the base policy already writes).
    stages: Literal["size", "cumulative"] = "size"
    order: tuple[StrictStr, ...] = ()  # cumulative: techniques in the order they are added (then the rest)
    start: PositiveInt = 1  # cumulative: how many of them stage 1 permits
    steps_per_stage: PositiveInt | None = 8  # advance after this many training steps in a stage...
    coverage_to_advance: Annotated[StrictFloat, Field(gt=0, le=1)] | None = None  # ...or at this stage coverage
    plateau_steps: PositiveInt | None = None  # ...or when the stage's cells have not improved for this many steps
    # Share of prompts drawn without any technique restriction (the plain prompt), mixed into every stage.
    free_share: Annotated[StrictFloat, Field(ge=0, lt=1)] = 0.0
    empty_weight: NonNegativeFloat = 4.0  # sampling weight of a permitted set whose archive cell is empty
    weak_weight: NonNegativeFloat = 2.0  # ... whose elite is below the median elite
    strong_weight: NonNegativeFloat = 1.0  # ... otherwise
    # A kernel using a technique its prompt did not permit: "hard" makes it `forbidden` (its
    # penalty; never compiled or timed), "soft" measures it like any kernel and scales its
    # performance term by violation_weight, so the policy still learns what its code is worth.
    violation: Literal["hard", "soft"] = "hard"
    violation_weight: Annotated[StrictFloat, Field(ge=0, lt=1)] = 0.5
    # A correct kernel that fills an empty archive cell or beats its cell's elite earns this share
    # of its own performance term on top (0: no bonus); at most 1, so it never outweighs the term.
    qd_bonus: Annotated[StrictFloat, Field(ge=0, le=1)] = 0.0
    # What a prompt's set asks: "permit" (the first reading) lets a kernel use any of its
    # techniques, or none; "require" asks for all of them, and a correct kernel that lacks one
    # breaks its prompt as one that uses a technique outside it does, judged on what the compiled
    # object shows (so it needs measure.verify_techniques). Permitting never asks for a technique:
    # under it most correct kernels of the 20-step study used none.
    ask: Literal["permit", "require"] = "permit"

    def __post_init__(self):
        if max(self.empty_weight, self.weak_weight, self.strong_weight) <= 0:
            raise ValueError("the sampling weights must not all be 0")
        if self.steps_per_stage is None and self.coverage_to_advance is None and self.plateau_steps is None:
            raise ValueError("sqd: stages never advance; set steps_per_stage, coverage_to_advance or plateau_steps")
        # Names are checked against the technique registry by lab.rl.sqd (a higher layer).
        if len(set(self.order)) != len(self.order):
            raise ValueError("sqd.order: name each technique once")


@dataclass(frozen=True, config=_STRICT)
class WarmStartConfig:
    """Rejection-sampling fine-tuning before GRPO (lab.rl.warm_start): sample the starting policy on
    the training phrasings, keep the correct kernels weighted by speedup, fine-tune on them."""

    samples: PositiveInt = 192  # completions per (problem, mode) scored, like reward evaluations
    max_copies: PositiveInt = 8  # copies of the fastest kept kernel in the fine-tuning set; slower ones fewer, >= 1
    epochs: PositiveFloat = 3.0
    learning_rate: PositiveFloat = 2e-4
    temperature: PositiveFloat = 1.0
    # Also fine-tune on demonstrations: the kernel generator's sweep (the space `lab autotune`
    # searches) for each entry, scored by the harness like the samples, the correct ones kept and
    # weighted with them. What the starting policy cannot write correctly itself enters this way.
    demonstrations: StrictBool = False
    # Pair every copy of a kept kernel with a prompt worded as the seed corpus words them (a
    # training phrasing, or one recombined from their sentences) instead of the phrasing it was
    # sampled on: fine-tuning on four fixed phrasings teaches their surface, and the policy then
    # loses the problem on held-out wording.
    reword: StrictBool = False


@dataclass(frozen=True, config=_STRICT)
class TrainConfig:
    """GRPO's budget and optimizer (TRL's GRPOTrainer)."""

    steps: PositiveInt = 40
    group_size: Annotated[StrictInt, Field(ge=2)] = 8  # completions per prompt: GRPO's group (>= 2 for an advantage)
    prompts_per_step: PositiveInt = 2
    learning_rate: PositiveFloat = 1e-4  # the seed policy is tiny; hub-size models want ~1e-6
    temperature: PositiveFloat = 1.0
    max_completion_length: PositiveInt = 256  # tokens; the seed policy's kernels are ~40-250 tokens
    loss_type: Literal["grpo", "bnpo", "dr_grpo", "dapo"] = "dapo"
    beta: NonNegativeFloat = 0.0  # KL coefficient (0 = no reference model, TRL's default)
    lora: StrictBool = False
    lora_rank: PositiveInt = 16
    save_steps: PositiveInt = 10  # checkpoint interval; a killed run resumes from the last one
    # Checkpoints kept on disk (None: all). The learning curve evaluates every checkpoint, so a
    # limit needs evaluation.curve_samples: 0.
    save_total_limit: PositiveInt | None = None
    use_vllm: StrictBool = False  # CUDA only: TRL generates with vLLM (colocated with the trainer)
    use_unsloth: StrictBool = False  # CUDA only: the model is loaded through unsloth
    bf16: StrictBool | None = None  # bfloat16 training; None: on where CUDA supports it, off on CPU
    # Where the trainer's logs go besides train_log.jsonl: TRL/transformers integrations, e.g.
    # ["tensorboard"] (pip install .[tensorboard]; logs under the run's folder, runs/<name>/s<seed>/logs).
    report_to: list[StrictStr] = field(default_factory=list)
    # Exploration: TRL GRPOConfig's own options, passed as they are (their defaults are TRL's).
    epsilon: PositiveFloat = 0.2  # the policy ratio's clip range below (and above, without epsilon_high)
    # Clip-higher (DAPO: 0.28): a token the policy rarely writes may gain more probability per step.
    epsilon_high: PositiveFloat | None = None
    # How a group's advantages are scaled: by the group's reward std (TRL's default; makes timing
    # noise between two near-equal kernels a full unit of advantage), the batch's, or not at all.
    scale_rewards: Literal["group", "batch", "none"] = "group"
    num_iterations: PositiveInt = 1  # updates per generated batch
    # Only the top quantile of tokens by entropy enter the policy loss (1.0: every token).
    top_entropy_quantile: Annotated[StrictFloat, Field(ge=0, le=1)] = 1.0
    entropy_coef: NonNegativeFloat = 0.0  # an entropy bonus in the loss (0: none)
    # Adaptive entropy control (Skywork-OR1): entropy_coef rises by entropy_coef_delta each step
    # the policy's entropy is at or below entropy_target (nats per token), and falls otherwise.
    use_adaptive_entropy: StrictBool = False
    entropy_target: PositiveFloat = 0.2
    entropy_coef_delta: PositiveFloat = 0.005
    # Move the KL reference towards the policy every ref_model_sync_steps (needs beta > 0).
    sync_ref_model: StrictBool = False
    ref_model_sync_steps: PositiveInt = 512
    # The excessive-speedup guard (lab.rl.guard): a correct training kernel above this multiple of
    # the best rate its run had found for the same (problem, mode) is flagged and kept to be read.
    excessive_speedup: Annotated[StrictFloat, Field(gt=1)] = 2.0
    # GRPO's prompts worded as the seed corpus words them (a training phrasing, or one recombined
    # from their sentences; lab.rl.train) instead of the training phrasings in turn; with SQD, its
    # schedule's prompts (lab.rl.sqd), each with its techniques sentence.
    reword: StrictBool = False

    def __post_init__(self):
        if self.sync_ref_model and self.beta == 0:
            raise ValueError("sync_ref_model needs a reference model: set beta > 0")

    @property
    def batch_size(self) -> int:
        return self.group_size * self.prompts_per_step

    def exploration(self) -> dict[str, Any]:
        """The exploration options, as GRPOConfig's arguments of the same names."""
        return {
            name: getattr(self, name)
            for name in (
                "epsilon",
                "epsilon_high",
                "scale_rewards",
                "num_iterations",
                "top_entropy_quantile",
                "entropy_coef",
                "use_adaptive_entropy",
                "entropy_target",
                "entropy_coef_delta",
                "sync_ref_model",
                "ref_model_sync_steps",
            )
        }


@dataclass(frozen=True, config=_STRICT)
class EvaluationConfig:
    """The evaluation protocol: completions of the held-out prompt phrasings (the problem's
    eval_prompts, in turn), sampled and scored per (problem, mode) and seed."""

    samples: PositiveInt = 48  # completions per (problem, mode) and seed: 144 per arm over 3 seeds
    temperature: NonNegativeFloat = 1.0  # 0 = greedy
    max_new_tokens: PositiveInt = 512
    # The learning curve: completions per (problem, mode) and seed scored at each saved
    # checkpoint of a trained arm and at step 0 (the starting policy); 0 = no curve.
    curve_samples: NonNegativeInt = 16
    # Technique-restricted prompts: completions per (problem, mode) and seed of held-out
    # phrasings that permit only some techniques (sets of at most two, drawn per seed, the same
    # for every arm); `compliance` is the share of their ok kernels that use nothing else. 0 = none.
    restricted_samples: NonNegativeInt = 0


@dataclass(frozen=True, config=_STRICT)
class ComputeConfig:
    """Where kernels are measured: the CPUs of this machine, or the workers of a Dask cluster
    (lab.harness.cluster). Each worker measures on its own host, with that host's CPU slots and
    calibration; every result records the host and machine that measured it."""

    backend: Literal["local", "dask"] = "local"
    address: StrictStr | None = None  # the Dask scheduler, tcp://host:port (backend: dask)
    # CPUs each evaluation holds on the host that measures it (its slot); None: the measurement's
    # own threads (1 in serial mode). More than that leaves the neighbouring CPUs of a run idle.
    threads_per_eval: PositiveInt | None = None

    def __post_init__(self):
        if self.backend == "dask" and not self.address:
            raise ValueError("backend dask needs address: tcp://host:port of the scheduler")
        if self.backend == "local" and self.address:
            raise ValueError(f"address {self.address} is for backend: dask (the backend is local)")

    def slot_threads(self, threads: int) -> int:
        """CPUs one evaluation of a `threads`-thread measurement holds."""
        return max(threads, self.threads_per_eval or threads)


@dataclass(frozen=True, config=_STRICT)
class SuiteEntry:
    """One (problem, execution model) of a suite, and its share of the training prompts."""

    problem: StrictStr
    mode: Mode
    weight: PositiveFloat = 1.0


@dataclass(frozen=True, config=_STRICT)
class ExperimentConfig:
    """One experiment, fully resolved: the policy, how it is measured, trained and evaluated."""

    name: StrictStr = "baseline"  # the folder under results_dir
    kind: Literal["baseline", "grpo"] = "baseline"  # baseline: evaluate the policy as it is; grpo: train first
    model: StrictStr = "models/seed-policy"  # local directory or hub id
    problem: StrictStr = "dgemm"
    # The runs of the experiment: a trained arm trains once per seed (into runs_dir/name/s<seed>),
    # and every arm samples its evaluation with each seed; metrics pool them, with intervals.
    seeds: list[StrictInt] = field(default_factory=lambda: [0, 1, 2])
    seed: StrictInt = 0  # one run's seed (sampling, training and SQD draws): set per run from `seeds`
    results_dir: StrictStr = "results"
    runs_dir: StrictStr = "runs"  # checkpoints (not committed)
    measure: MeasureConfig = field(default_factory=MeasureConfig)
    compute: ComputeConfig = field(default_factory=ComputeConfig)  # where the measuring happens
    reward: RewardConfig = field(default_factory=RewardConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    sqd: SQDConfig | None = None  # None: plain prompts (GRPO-only); set: GRPO+SQD
    warm_start: WarmStartConfig | None = None  # set: rejection-sampling fine-tuning before GRPO
    # A suite: the (problem, mode) pairs trained on (each GRPO group is one of them, drawn by
    # weight) and evaluated (every pair). None: `problem` alone, with the problem's own prompt.
    # Serial entries run on 1 thread; OpenMP entries on measure.threads.
    suite: list[SuiteEntry] | None = None

    def __post_init__(self):
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.name) or self.name.startswith("."):
            raise ValueError(f"experiment names are folder names (letters, digits, _ . -), got {self.name!r}")
        if not self.seeds or len(set(self.seeds)) < len(self.seeds):
            raise ValueError(f"seeds: list distinct seeds, at least one (got {self.seeds})")
        if self.kind == "baseline" and (self.sqd is not None or self.warm_start is not None):
            raise ValueError("sqd and warm_start need kind: grpo (a baseline does not train)")
        if self.reward.rarity_bonus and not self.measure.verify_techniques:
            raise ValueError(
                "reward.rarity_bonus needs measure.verify_techniques: true (without the object's verdict, "
                "dead code that names a technique would earn it)"
            )
        if self.reward.max_at_k_steps is not None and not (
            self.reward.max_at_k_steps < self.train.steps
            and self.reward.max_at_k_steps % self.train.num_iterations == 0
        ):
            raise ValueError(
                f"reward.max_at_k_steps ({self.reward.max_at_k_steps}) must be below train.steps "
                f"({self.train.steps}) and a multiple of train.num_iterations ({self.train.num_iterations}): "
                "TRL scores a batch once every num_iterations steps"
            )
        if self.reward.max_at_k is not None and self.reward.max_at_k > self.train.group_size:
            raise ValueError(
                f"reward.max_at_k ({self.reward.max_at_k}) is a best of k samples of one group: "
                f"at most train.group_size ({self.train.group_size})"
            )
        if self.sqd is not None and self.sqd.ask == "require" and not self.measure.verify_techniques:
            raise ValueError(
                "sqd.ask: require needs measure.verify_techniques: true (without the object's verdict, "
                "dead code that names a required technique would meet the requirement)"
            )
        if self.train.save_total_limit is not None and self.evaluation.curve_samples and self.kind == "grpo":
            raise ValueError(
                "train.save_total_limit deletes checkpoints the learning curve evaluates: "
                "set evaluation.curve_samples: 0, or leave save_total_limit out"
            )
        if self.suite is not None:
            if not self.suite:
                raise ValueError("suite: list at least one {problem, mode} entry, or leave it out")
            pairs = [(e.problem, e.mode) for e in self.suite]
            repeated = sorted({f"{p}/{m}" for p, m in pairs if pairs.count((p, m)) > 1})
            if repeated:
                raise ValueError(f"suite: each (problem, mode) once; repeated: {', '.join(repeated)}")
            if len({e.problem for e in self.suite}) > 1 and self.reward.positive == "gflops":
                raise ValueError(
                    "a suite of several problems needs a scale-free reward: reward.positive: rank, log_speedup "
                    "or speedup (GFLOPS of different problems are not comparable)"
                )

    @property
    def entries(self) -> list[SuiteEntry]:
        """The (problem, mode) pairs this experiment trains and evaluates on: the suite, or the one
        problem in measure.mode."""
        return list(self.suite) if self.suite is not None else [SuiteEntry(self.problem, self.measure.mode)]

    @property
    def out_dir(self) -> Path:
        return Path(self.results_dir) / self.name

    @property
    def run_dir(self) -> Path:
        """Where the run of this config's `seed` trains (one folder per seed)."""
        return Path(self.runs_dir) / self.name / f"s{self.seed}"

    def for_seed(self, seed: int) -> ExperimentConfig:
        """The config of one run: this experiment with `seed`."""
        return dataclasses.replace(self, seed=seed)

    def to_dict(self) -> dict:
        """The config as the JSON written beside its results (and read back by `from_dict`)."""
        return _ADAPTER.dump_python(self, mode="json")

    @classmethod
    def from_dict(cls, data: dict) -> ExperimentConfig:
        try:
            return _ADAPTER.validate_python(data)
        except ValidationError as err:
            raise ConfigError(_describe(err, lambda loc: ("<dict>", ".".join(map(str, loc))))) from None


_ADAPTER = TypeAdapter(ExperimentConfig)


@dataclass(frozen=True)
class LabConfig:
    """A config file, resolved: its experiments by name, and where results and figures go."""

    path: str
    experiments: dict[str, ExperimentConfig]
    results_dir: str = "results"
    figures_dir: str = "results/figures"

    def experiment(self, name: str) -> ExperimentConfig:
        if name not in self.experiments:
            raise ConfigError(f"{self.path}: no experiment {name!r}; this file has: {', '.join(self.experiments)}")
        return self.experiments[name]


# --- loading -------------------------------------------------------------------------------------------------

_FILE_KEYS = {"defaults", "experiments", "figures_dir"}  # file-level keys; the rest are experiment settings


class _Loader(yaml.SafeLoader):
    """YAML 1.2 floats: PyYAML (YAML 1.1) reads `1e-4` as text, which would then fail as a wrong type."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+|\.[0-9_]+"
        r"(?:[eE][-+]?[0-9]+)?|\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN)$"
    ),
    list("-+0123456789."),
)


def parse_value(text: str) -> Any:
    """A command-line value, read as YAML: `5` -> 5, `1e-4` -> 0.0001, `null` -> None, `[0, 1]` -> a list."""
    return yaml.load(text, Loader=_Loader)


def _read_layers(path: Path, seen: tuple[Path, ...] = ()) -> list[tuple[str, dict]]:
    """(file, mapping) for the file and, first, everything it inherits from."""
    path = Path(path)
    if path.resolve() in seen:
        raise ConfigError(f"{path}: defaults: inheritance cycle through {path.name}")
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    try:
        data = yaml.load(path.read_text(), Loader=_Loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "?"
        raise ConfigError(f"{path}: {where}: not valid YAML ({getattr(err, 'problem', err)})") from None
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: (top): expected a mapping of settings, got {type(data).__name__}")
    parents = data.get("defaults") or []
    parents = [parents] if isinstance(parents, str) else parents
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise ConfigError(f"{path}: defaults: expected a file name or a list of file names")
    layers: list[tuple[str, dict]] = []
    for parent in parents:
        layers += _read_layers(path.parent / parent, (*seen, path.resolve()))
    return [*layers, (str(path), data)]


def _set_layer(overrides: Sequence[str]) -> dict:
    """`key.path=value` pairs as one nested mapping."""
    out: dict = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"--set {item}: expected key.path=value")
        node = out
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item}: {part} is set to a value and to a mapping")
        node[last] = parse_value(value)
    return out


def _merge(base: dict, top: dict, origin: dict, source: str, prefix: str) -> dict:
    """`top` merged onto `base`; `origin` maps each key path set by `top` to (file, path in that file)."""
    out = dict(base)
    for key, value in top.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value, origin, source, f"{path}.")
        else:
            out[key] = value
            origin[tuple(_strip(path).split("."))] = (source, path)
            if isinstance(value, dict):  # every key below comes from here too
                _mark(value, origin, source, f"{path}.")
    return out


def _strip(path: str) -> str:
    """The key path in the experiment (without the `experiments.<name>.` of the file)."""
    return re.sub(r"^experiments\.[^.]+\.", "", path)


def _mark(value: dict, origin: dict, source: str, prefix: str) -> None:
    for key, sub in value.items():
        origin[tuple(_strip(f"{prefix}{key}").split("."))] = (source, f"{prefix}{key}")
        if isinstance(sub, dict):
            _mark(sub, origin, source, f"{prefix}{key}.")


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> LabConfig:
    """Read, merge and validate a config file (see the module docstring); raises ConfigError."""
    layers = _read_layers(Path(path))
    if overrides:
        layers.append(("--set", _set_layer(overrides)))
    shared: dict = {}
    experiments: dict[str, dict] = {}
    origin: dict[tuple, tuple[str, str]] = {}
    exp_origin: dict[str, dict[tuple, tuple[str, str]]] = {}
    figures_dir = None
    for source, data in layers:
        for key, value in data.items():
            if key == "figures_dir":
                if not isinstance(value, str):
                    raise ConfigError(f"{source}: figures_dir: expected a folder name")
                figures_dir = value
            elif key == "experiments":
                if not isinstance(value, dict):
                    raise ConfigError(f"{source}: experiments: expected a mapping of experiment names to settings")
                for name, settings in value.items():
                    if settings is None and str(name) in experiments:
                        del experiments[str(name)]  # `name: null` drops an experiment inherited from defaults
                        continue
                    settings = {} if settings is None else settings
                    if not isinstance(settings, dict):
                        raise ConfigError(f"{source}: experiments.{name}: expected a mapping of settings")
                    experiments[str(name)] = _merge(
                        experiments.get(str(name), {}),
                        settings,
                        exp_origin.setdefault(str(name), {}),
                        source,
                        f"experiments.{name}.",
                    )
            elif key != "defaults":
                shared = _merge(shared, {key: value}, origin, source, "")
    if not experiments:
        raise ConfigError(f"{path}: experiments: the file names no experiment")
    resolved = {}
    for name, own in experiments.items():
        merged = _merge_plain(shared, {**own, "name": name})
        where = {**origin, **exp_origin[name]}
        try:
            resolved[name] = _ADAPTER.validate_python(merged)
        except ValidationError as err:
            raise ConfigError(_describe(err, lambda loc, w=where, n=name: _locate(loc, w, n, str(path)))) from None
    results_dir = shared.get("results_dir", ExperimentConfig.__dataclass_fields__["results_dir"].default)
    return LabConfig(
        path=str(path),
        experiments=resolved,
        results_dir=results_dir,
        figures_dir=figures_dir or str(Path(results_dir) / "figures"),
    )


def _merge_plain(base: dict, top: dict) -> dict:
    return _merge(base, top, {}, "", "")


def _locate(loc: tuple, where: dict, name: str, path: str) -> tuple[str, str]:
    """The file and key path that set the value at `loc` (the longest known prefix)."""
    keys = tuple(str(k) for k in loc)
    for i in range(len(keys), 0, -1):
        if keys[:i] in where:
            source, key_path = where[keys[:i]]
            return source, ".".join([key_path, *keys[i:]])
    return path, f"experiments.{name}." + ".".join(keys) if keys else f"experiments.{name}"


def _describe(err: ValidationError, locate) -> str:
    """One line for the first error: file, key path, and what was expected there."""
    first = err.errors()[0]
    loc = tuple(k for k in first["loc"] if not (isinstance(k, str) and k.startswith("function-")))
    source, key_path = locate(loc)
    if first["type"] in ("unexpected_keyword_argument", "extra_forbidden"):
        known = _known_keys(loc[:-1])
        return f"{source}: {key_path}: unknown key" + (f"; expected one of: {', '.join(known)}" if known else "")
    message = first["msg"].removeprefix("Value error, ")
    got = first.get("input")
    shown = "" if isinstance(got, dict) or first["type"] == "value_error" else f", got {got!r}"
    return f"{source}: {key_path or '(top)'}: {message[0].lower()}{message[1:]}{shown}"


def _known_keys(loc: tuple) -> list[str]:
    """The keys the config class at `loc` (below ExperimentConfig) accepts."""
    kind: Any = ExperimentConfig
    for key in loc:
        hints = typing.get_type_hints(kind) if dataclasses.is_dataclass(kind) else {}
        kind = hints.get(str(key))
        for arg in typing.get_args(kind) or ():  # X | None
            if dataclasses.is_dataclass(arg):
                kind = arg
    return [f.name for f in dataclasses.fields(kind)] if dataclasses.is_dataclass(kind) else []


def flat(config: dict, prefix: str = "") -> dict:
    """{"train": {"steps": 2}} -> {"train.steps": 2}."""
    out = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def changed_fields(saved: dict, current: dict, ignore: typing.AbstractSet[str] = frozenset()) -> list[str]:
    """The key paths (e.g. `train.learning_rate`; top-level keys in `ignore` left out) whose
    values differ between two saved configs."""
    saved = flat({k: v for k, v in saved.items() if k not in ignore})
    current = flat({k: v for k, v in current.items() if k not in ignore})
    missing = object()
    return sorted(k for k in set(saved) | set(current) if saved.get(k, missing) != current.get(k, missing))


@functools.cache  # built once: every reuse decision and status row compares against it (read only)
def _defaults() -> dict:
    """An experiment's settings at their defaults, flat, with the optional sections (sqd,
    warm_start) at theirs."""
    base = ExperimentConfig().to_dict()
    base["sqd"] = ExperimentConfig(kind="grpo", sqd=SQDConfig()).to_dict()["sqd"]
    base["warm_start"] = ExperimentConfig(kind="grpo", warm_start=WarmStartConfig()).to_dict()["warm_start"]
    return flat(base)


def non_default_settings(settings: dict) -> dict:
    """An experiment's settings (ExperimentConfig.to_dict, or a saved config.json) flat
    (`train.steps`: value), without those at their current default: what a config changes.
    A field added later at its default is absent from both an old and a new config's."""
    default = _defaults()
    return {k: v for k, v in flat(settings).items() if k not in default or default[k] != v}
