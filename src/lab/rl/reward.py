"""The reward: every status becomes a number here, and nowhere else.

Tiers follow the paper by default (lab.config.RewardConfig): format or
library/permission violation -100, compile error -40, timeout -30, runtime error
-20, wrong result -10; correct code earns a positive performance term: its GFLOPS
(the paper's choice), its speedup over the problem's textbook baseline, or
log(1 + speedup). Or, scale-free, `rank`: within its GRPO group a completion earns the
share of the others it beats (ties count half), any correct kernel beating any failure,
correct ones ordered by speedup, failures by their penalty; a group's rewards then
spread over [0, 1] whatever the problem's scale and however far apart the kernels are.

    >>> from lab.harness.evaluate import EvalResult
    >>> cfg = RewardConfig()
    >>> reward_from_result(EvalResult(status="compile_error"), cfg)
    -40.0
    >>> reward_from_result(EvalResult(status="ok", gflops=12.5, speedup=6.0), cfg)
    12.5
    >>> reward_from_result(EvalResult(status="ok", gflops=12.5, speedup=6.0), RewardConfig(positive="speedup"))
    6.0

`HarnessReward` is the TRL reward function that training, the command line and the
tests all use. TRL calls it with the batch of completions (plain strings, or chat
messages) and the dataset's other columns as keywords, and takes one float each:

    >>> fake = lambda texts, problem, config: [EvalResult(status="wrong_result") for _ in texts]
    >>> reward = HarnessReward("dgemm", cfg, evaluate=fake)
    >>> reward(["int x;", [{"role": "assistant", "content": "void dgemm(...) {}"}]])
    [-10.0, -10.0]

A `problem` column routes rows to problems, a `mode` column to execution models
(serial or openmp); a `permitted` column (SQD's permitted technique sets) judges the
techniques each kernel uses against its prompt. Under SQD's hard rule (the default) code
whose text uses any other technique is `forbidden` without being compiled or timed, and a
kernel whose compiled object shows one its text hid (lab.techniques.confirm) is `forbidden`
after it ran; the text alone decides, so a technique the text only appears to use forbids
the kernel too. Under the soft rule every kernel is measured, the object's verdict stands,
and a violator's performance term is scaled down (`SQDConfig.violation_weight`). When SQD asks
for its sets (`SQDConfig.ask: require`), a kernel that ran and lacks one of its prompt's
techniques breaks the prompt the same way, judged after it ran on the techniques its object
shows (a SIMD routine the kernel never calls does not meet a SIMD requirement). Correct
kernels are offered to the technique archives under the techniques they really use, and
one that fills an empty cell or beats its elite as the batch found it may earn a bonus
(`SQDConfig.qd_bonus`). The last batch's results stay on the object for the training log.

With `RewardConfig.max_at_k` each group's rewards then become each row's share of the group's
expected best of k (`max_at_k`), so GRPO climbs the best of k samples rather than their mean
(for the first `max_at_k_steps` of training only, if set: the trainer's step is read from the
`trainer_state` TRL hands its reward functions).

Training hands TRL the reward as four terms, `HarnessReward.terms`, each a reward function
of its own that TRL logs under its name (`rewards/performance/mean`, ...) and sums with
GRPOConfig's `reward_weights` (`TERM_WEIGHTS`, under which the sum is the reward above):

- `performance`: the status's penalty, or a correct kernel's unscaled performance term;
- `compliance`: what a soft violation of the permitted set takes off it (0 for the rest);
- `qd_bonus`: what filling or improving an archive cell adds (0 for the rest);
- `rarity`: what a rare set of techniques adds (`RewardConfig.rarity_bonus`; 0 when it is 0):
  a correct kernel's term grows by rarity_bonus x (1 - the share of the batch's other correct
  kernels of its problem that use the same set), the set read from the compiled object where
  it can tell, so dead code that names a technique earns nothing.

The terms share one evaluation of the batch: the first term TRL calls scores it, the
others read the same verdicts (`term_rewards` turns them into the four lists).

    >>> reward = HarnessReward("dgemm", cfg, evaluate=lambda texts, problem, config: [
    ...     EvalResult(status="ok", gflops=8.0) for _ in texts])
    >>> [(t.__name__, t(["int x;"])) for t in reward.terms]
    [('performance', [8.0]), ('compliance', [0.0]), ('qd_bonus', [0.0]), ('rarity', [0.0])]
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lab.config import RAN_STATUSES, MeasureConfig, RewardConfig, SQDConfig
from lab.harness.evaluate import EvalResult, evaluate_batch
from lab.harness.extract import source_or_none
from lab.harness.problems import load_problem
from lab.rl.sqd import TechniqueArchive, descriptor, permission_violation, requirement_violation
from lab.techniques import TECHNIQUES, confirm, detect


def reward_from_result(result: EvalResult, config: RewardConfig, scale: float = 1.0) -> float | None:
    """The scalar reward of one evaluated completion; None for a `harness_error` under the
    default "group_mean" rule, which only a group can settle (see `group_rewards`). `scale`
    multiplies the performance term of a correct kernel (SQD's soft violations and QD bonus,
    `performance_scale`); penalties are never scaled."""
    if result.status == "harness_error":
        return None if config.harness_error == "group_mean" else float(config.harness_error)
    if result.status != "ok":
        return float(config.penalties[result.status])
    if config.positive == "gflops":
        return scale * float(result.gflops)
    if result.speedup is None:  # only when the baseline was not timed (MeasureConfig(baseline=False))
        raise ValueError(f"the {config.positive!r} reward needs the baseline timed (measure.baseline: true)")
    if config.positive == "speedup":
        return scale * float(result.speedup)
    if config.positive == "rank":  # outside a group: the speedup it is ranked by (see group_rewards)
        return scale * float(result.speedup)
    return scale * math.log1p(result.speedup)


def performance_scale(violation: str | None, improved: bool, sqd: SQDConfig | None) -> float:
    """The factor on a correct kernel's performance term under SQD: violation_weight if it broke
    its prompt's permitted set (soft violations), times 1 + qd_bonus if it beat its archive
    cell's elite as the batch found it (an empty cell counts); 1 without SQD.

    >>> performance_scale("uses simd", True, SQDConfig(violation="soft", violation_weight=0.5, qd_bonus=0.2))
    0.6
    """
    compliance, bonus = performance_factors(violation, improved, sqd)
    return compliance * bonus


def performance_factors(violation: str | None, improved: bool, sqd: SQDConfig | None) -> tuple[float, float]:
    """The two factors of `performance_scale`: (violation_weight or 1, 1 + qd_bonus or 1)."""
    if sqd is None:
        return 1.0, 1.0
    return (sqd.violation_weight if violation else 1.0), ((1.0 + sqd.qd_bonus) if improved else 1.0)


def _rank_key(result: EvalResult, config: RewardConfig, scale: float = 1.0) -> tuple[int, float]:
    """What `rank` orders by: correct above failing; correct by (scaled) speedup, failures by penalty."""
    if result.status == "ok":
        return (1, scale * float(result.speedup or 0.0))
    return (0, float(config.penalties[result.status]))


def ranked(
    keys: Sequence[tuple],
) -> list[float]:
    """Each key's share of the other keys it beats, ties counting half (0 alone in its group).

    >>> ranked([(1, 5.0), (0, -40.0), (1, 2.0), (1, 5.0)])
    [0.8333333333333334, 0.0, 0.3333333333333333, 0.8333333333333334]
    """
    n = len(keys)
    if n < 2:
        return [0.0] * n
    return [(sum(k > o for o in keys) + 0.5 * (sum(k == o for o in keys) - 1)) / (n - 1) for k in keys]


def group_rewards(
    results: Sequence[EvalResult],
    groups: Sequence[Any],
    config: RewardConfig,
    scales: Sequence[float] | None = None,
) -> list[float]:
    """Rewards of a batch whose rows form groups (GRPO: the completions of one prompt); `scales`
    multiply each row's performance term (`performance_scale`; 1 where None).

    A `harness_error` under the "group_mean" rule gets the mean reward of the rest of its group,
    so its advantage is zero: the policy is neither pushed towards nor away from what it wrote
    because the harness failed. A group with nothing else gets 0.0 for it.

    >>> ok, err = EvalResult(status="ok", gflops=30.0), EvalResult(status="harness_error")
    >>> group_rewards([ok, EvalResult(status="wrong_result"), err, err], ["p", "p", "p", "q"], RewardConfig())
    [30.0, -10.0, 10.0, 0.0]
    """
    scales = list(scales) if scales is not None else [1.0] * len(results)
    rewards = group_values(results, groups, config, scales)
    by_group: dict[Any, list[float]] = {}
    for g, value in zip(groups, rewards):
        if value is not None:
            by_group.setdefault(g, []).append(value)
    return [
        value if value is not None else (sum(by_group[g]) / len(by_group[g]) if by_group.get(g) else 0.0)
        for g, value in zip(groups, rewards)
    ]


def group_values(
    results: Sequence[EvalResult], groups: Sequence[Any], config: RewardConfig, scales: Sequence[float]
) -> list[float | None]:
    """Each row's reward before a `harness_error` is settled (None for one the group must
    settle): its rank in its group (`rank`) or its status's reward, then, with
    `RewardConfig.max_at_k`, its share of its group's expected best of k (`max_at_k`)."""
    if config.positive == "rank":
        # The harness's failures are nobody's rank: they get their group's mean, like the default rule.
        values = group_ranks(results, groups, config, scales)
    else:
        values = [reward_from_result(r, config, k) for r, k in zip(results, scales)]
    if config.max_at_k is not None:
        for g in dict.fromkeys(groups):
            idx = [i for i, (h, v) in enumerate(zip(groups, values)) if h == g and v is not None]
            for i, value in zip(idx, max_at_k([values[i] for i in idx], config.max_at_k)):
                values[i] = value
    return values


def max_at_k(values: Sequence[float], k: int) -> list[float]:
    """Each of one group's rewards replaced by its share of the group's expected best of k (k
    of them drawn without replacement; k is at most the group's size): n/k x the sum, over the
    k-subsets that hold the row, of the subset's best, over C(n, k). Their mean is the expected
    best of k, and they are the unbiased max@k policy-gradient weights of Walder and Karkhanis's
    Pass@k Policy Optimization (2025): what GRPO then climbs is the best of k samples, not their
    mean. Written here because no library the lab uses has the transform; the sorted form below
    counts, for the row at sorted place a, the C(a, k-1) subsets it tops and, for each better row
    b, the C(b-1, k-2) subsets that hold both and are topped by b.

    >>> max_at_k([1.0, 3.0, 2.0], 2)  # subsets {1,3}: 3, {1,2}: 2, {3,2}: 3; expected best 8/3
    [2.5, 3.0, 2.5]
    >>> max_at_k([5.0, -40.0, 5.0, 5.0], 4), max_at_k([4.0, 1.0], 1)
    ([5.0, 5.0, 5.0, 5.0], [4.0, 1.0])
    """
    n = len(values)
    k = min(k, n)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda i: values[i])
    ranked_values = [values[i] for i in order]
    total = math.comb(n, k)
    out = [0.0] * n
    for a, i in enumerate(order):
        topped = math.comb(a, k - 1) * ranked_values[a]
        above = sum(math.comb(b - 1, k - 2) * ranked_values[b] for b in range(a + 1, n)) if k >= 2 else 0.0
        out[i] = n / k * (topped + above) / total
    return out


def group_ranks(
    results: Sequence[EvalResult], groups: Sequence[Any], config: RewardConfig, scales: Sequence[float]
) -> list[float | None]:
    """The `rank` reward of each row within its group, the speedups of correct kernels scaled
    by `scales`; None for a `harness_error` (left out of its group's ranking)."""
    out: list[float | None] = [None] * len(results)
    for g in dict.fromkeys(groups):
        idx = [i for i, (h, r) in enumerate(zip(groups, results)) if h == g and r.status != "harness_error"]
        for i, value in zip(idx, ranked([_rank_key(results[i], config, scales[i]) for i in idx])):
            out[i] = value
    return out


#: The reward's terms, in the order training hands them to TRL (each a reward function of that
#: name), and GRPOConfig.reward_weights under which their weighted sum is `reward_from_result`'s
#: number (`group_rewards`' for `rank`).
TERMS = ("performance", "compliance", "qd_bonus", "rarity")
TERM_WEIGHTS = (1.0, 1.0, 1.0, 1.0)


def rarity_factors(
    results: Sequence[EvalResult],
    used: Sequence[frozenset[str] | None],
    problems: Sequence[str],
    bonus: float,
) -> list[float]:
    """Each row's rarity factor: 1 + bonus x (1 - share) for a correct kernel, where share is
    the fraction of the batch's other correct kernels of the same problem whose technique set
    (`used`: detected, corrected by the object) is its own (0 when there are none); 1 otherwise.
    The batch, not the group: GRPO's advantage compares a group's completions, and a set the
    whole batch writes is no rarer for being alone in its group.

    >>> ok = EvalResult(status="ok", gflops=1.0)
    >>> loop, simd = frozenset({"loop_reorder"}), frozenset({"simd"})
    >>> rarity_factors([ok, ok, ok, EvalResult(status="wrong_result")], [loop, loop, simd, simd], ["p"] * 4, 0.5)
    [1.25, 1.25, 1.5, 1.0]
    """
    factors = [1.0] * len(results)
    if not bonus:
        return factors
    correct = [i for i, r in enumerate(results) if r.status == "ok" and used[i] is not None]
    for i in correct:
        others = [j for j in correct if j != i and problems[j] == problems[i]]
        share = sum(used[j] == used[i] for j in others) / len(others) if others else 0.0
        factors[i] = 1.0 + bonus * (1.0 - share)
    return factors


def term_rewards(
    results: Sequence[EvalResult],
    groups: Sequence[Any],
    config: RewardConfig,
    violations: Sequence[str | None] | None = None,
    improved: Sequence[bool] | None = None,
    sqd: SQDConfig | None = None,
    unscored_as_none: bool = True,
    rarity: Sequence[float] | None = None,
) -> dict[str, list[float | None]]:
    """Each row's reward split into TERMS: {term: one value per row}.

    The reward (`reward_from_result` with `performance_scale`) multiplies a correct kernel's
    performance term p by the soft violation's factor c (violation_weight, or 1), the bonus
    factor b (1 + qd_bonus, or 1) and the rarity factor r (`rarity_factors`, or 1): p*c*b*r.
    TRL adds its reward functions, so the terms are the steps from p to p*c*b*r, which add up
    to it: performance p, compliance p*(c - 1) (what the violation costs), qd_bonus p*c*(b - 1)
    (what the archive gain adds, on the term the kernel keeps), rarity p*c*b*(r - 1). Failures
    keep their penalty in
    `performance` and 0 elsewhere, so each term's batch mean (TRL's `rewards/<term>/mean`) is
    its share of the mean reward. For `rank` and `max_at_k` the group's transform is not linear
    in the scales, so the terms are the same steps between transformed groups: unscaled, with
    c, with c x b, with c x b x r.
    The sum equals the reward up to floating-point rounding (TRL adds the terms in float32).

    A `harness_error` under the "group_mean" rule (and always under `rank`, as in
    `group_rewards`) is None in every term. TRL 1.16 (GRPOTrainer._generate_and_score_completions)
    calls a row whose reward functions all returned None unscorable: it leaves it out of its
    group's mean and std and sets its advantage to 0, which is what "group_mean" means (the
    group's mean as its reward: zero advantage, the others' baseline unchanged). What differs
    from `group_rewards`' number: the group's std (scale_rewards="group") and the logged mean
    reward are over the scored rows only. A reward function besides these terms that scores the
    row would make it scorable again, with the None terms counted 0 (TRL's nansum): a harness
    reward of 0 for it, which is no group's mean. So with `unscored_as_none` False (training with
    other reward functions) the row gets what `group_rewards` gives it, its group's mean, in
    `performance` (0 in the others). A fixed `harness_error` number is its `performance`.

    >>> ok = EvalResult(status="ok", gflops=10.0)
    >>> term_rewards([ok], ["g"], RewardConfig(), ["uses simd"], [True], SQDConfig(violation="soft", qd_bonus=0.5))
    {'performance': [10.0], 'compliance': [-5.0], 'qd_bonus': [2.5], 'rarity': [0.0]}
    """
    n = len(results)
    violations = list(violations) if violations is not None else [None] * n
    improved = list(improved) if improved is not None else [False] * n
    rarity = list(rarity) if rarity is not None else [1.0] * n
    factors = [performance_factors(v, up, sqd) for v, up in zip(violations, improved)]
    # performance_scale, as group_rewards scales the performance terms (for rank, the speedups).
    scales = [performance_scale(v, up, sqd) for v, up in zip(violations, improved)]
    rare_scales = [k * r for k, r in zip(scales, rarity)]  # the whole reward's scales
    if config.positive == "rank" or config.max_at_k is not None:
        plain = group_values(results, groups, config, [1.0] * n)
        judged = group_values(results, groups, config, [c for c, _ in factors])
        full = group_values(results, groups, config, scales)
        rare = group_values(results, groups, config, rare_scales)
        terms = {
            "performance": plain,
            "compliance": [None if a is None else b - a for a, b in zip(plain, judged)],
            "qd_bonus": [None if b is None else c - b for b, c in zip(judged, full)],
            "rarity": [None if c is None else d - c for c, d in zip(full, rare)],
        }
    else:
        terms = {name: [] for name in TERMS}
        for r, (c, b), q in zip(results, factors, rarity):
            p = reward_from_result(r, config)
            if p is None:  # a harness_error under "group_mean"
                values = (None, None, None, None)
            elif r.status != "ok":  # a penalty (or a fixed harness_error number) is never scaled
                values = (p, 0.0, 0.0, 0.0)
            else:
                values = (p, p * (c - 1.0), p * c * (b - 1.0), p * c * b * (q - 1.0))
            for name, value in zip(TERMS, values):
                terms[name].append(value)
    if not unscored_as_none:
        whole = group_rewards(results, groups, config, rare_scales)
        for i, value in enumerate(terms["performance"]):
            if value is None:
                terms["performance"][i] = whole[i]
                for name in TERMS[1:]:
                    terms[name][i] = 0.0
    return terms


class RewardTerm:
    """One of a HarnessReward's TERMS as a TRL reward function: `(completions, **kwargs) ->
    list[float | None]`, named `name` (TRL logs a reward function by its `__name__`)."""

    def __init__(self, harness: HarnessReward, name: str):
        self.harness, self.__name__ = harness, name

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        return self.harness.term(self.__name__, completions, **kwargs)

    def __repr__(self) -> str:
        return f"RewardTerm({self.__name__!r} of {self.harness.__name__})"


@dataclass
class _Batch:
    """A scored batch's terms, and which terms have been handed out for it."""

    key: str
    terms: dict[str, list[float | None]]
    served: set[str] = field(default_factory=set)


#: The columns besides the completions that decide a batch's verdicts and groups.
_BATCH_COLUMNS = ("prompts", "prompt", "problem", "permitted", "mode", "row", "stage")


def completion_text(completion: Any) -> str:
    """TRL passes plain strings, or for chat data a list of messages: take the assistant text."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content", "") for m in completion if isinstance(m, dict))
    if isinstance(completion, dict):
        return completion.get("content", "")
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


Evaluator = Callable[[list[str], str, MeasureConfig], list[EvalResult]]


def _evaluate(texts: list[str], problem: str, config: MeasureConfig) -> list[EvalResult]:
    return evaluate_batch(texts, problem, config, progress=False)


class HarnessReward:
    """The TRL reward function `(completions, **kwargs) -> list[float]` on the measured harness.

    `problem` is the default for rows without a `problem` column; `measure` says how each
    kernel is measured (a row's `mode` column adapts it, MeasureConfig.for_mode); `name`
    replaces the problem in the reward's name (`__name__`); `archives` (problem -> TechniqueArchive)
    receive every correct kernel; `sqd` (SQDConfig) says how permitted sets are enforced and
    whether archive gains earn a bonus; `evaluate` replaces the harness (tests). After each
    call, `last` holds the batch's EvalResults, `last_texts` the completions, `last_modes`
    their modes, `last_violations` why each broke its permitted set (None if it did not),
    `last_improved` whether it beat its archive cell's elite as the batch found it (an empty
    cell counts: copies of a kernel all do), `last_measured` whether
    the harness compiled and ran it (lab.config.RAN_STATUSES), `last_techniques` the techniques
    its kernel uses as the permission check and the archive judged them (None: no kernel),
    `last_rarity` each row's rarity factor (`rarity_factors`), `last_rewards` each row's whole
    reward (the terms' sum; None where the group rule left a row unscored), and `last_rows`,
    `last_stages`, `last_permitted`, `last_problems` the SQD columns, for the training log;
    `started`/`finished` time the scoring.

    Called, it returns the whole reward of each row (the command line, the tests). `terms` are
    its TERMS as TRL reward functions, for training: they share one evaluation per batch. A
    `harness_error` the group-mean rule settles is None in every term, or with `unscored_as_none`
    False (other reward functions score the batch too) its group's mean (`term_rewards`).
    """

    def __init__(
        self,
        problem: str,
        reward: RewardConfig | None = None,
        measure: MeasureConfig | None = None,
        archives: dict[str, TechniqueArchive] | None = None,
        evaluate: Evaluator = _evaluate,
        name: str | None = None,
        sqd: SQDConfig | None = None,
        unscored_as_none: bool = True,
    ):
        self.problem, self.reward = problem, reward or RewardConfig()
        self.unscored_as_none = unscored_as_none
        self.measure = measure or MeasureConfig()
        self.archives, self._evaluate, self.sqd = archives, evaluate, sqd
        # The whole reward's name, as TRL would log it ("suite_log_speedup" for a suite); in training
        # TRL logs the terms instead, under theirs.
        self.__name__ = f"{name or problem}_{self.reward.positive}"
        self.last: list[EvalResult] = []
        self.last_permitted: list[str | None] = []  # descriptors of the permitted sets (empty without SQD)
        self.last_violations: list[str | None] = []
        self.last_improved: list[bool] = []
        self.last_measured: list[bool] = []
        self.last_techniques: list[list[str] | None] = []
        self.last_rarity: list[float] = []  # each row's rarity factor (rarity_factors)
        self.last_rewards: list[float | None] = []
        self.last_rows: list[int] = []
        self.last_stages: list[int] = []  # the stage each row was drawn in
        self.last_problems: list[str] = []
        self.last_texts: list[str] = []  # the completions as scored (for the record of training samples)
        self.last_modes: list[str | None] = []
        self.seconds = 0.0
        self.started = self.finished = 0.0  # monotonic times of the last batch's scoring
        self.terms = tuple(RewardTerm(self, name) for name in TERMS)
        self._batch: _Batch | None = None  # the last batch the terms scored

    def results(
        self,
        completions: Sequence[Any],
        problem: Sequence[str] | None = None,
        permitted: Sequence[Sequence[str] | None] | None = None,
        mode: Sequence[str | None] | None = None,
    ) -> list[EvalResult]:
        """The EvalResult of each completion: under the hard rule `forbidden` for a technique
        outside its row's permitted set, else the harness's verdict, measured in the row's
        execution model (`mode`: serial runs 1 thread; openmp or None, `measure` as given)."""
        return self._score(completions, problem, permitted, mode)[0]

    def _score(
        self, completions, problem, permitted, mode
    ) -> tuple[list[EvalResult], list[str | None], list[bool], list[bool], list[frozenset[str] | None]]:
        """(results, each row's permission violation or None, whether it filled or improved an
        archive cell as the batch found it, whether the harness compiled and ran it, the
        techniques its kernel uses: detected, corrected by its object where one was built)."""
        n = len(completions)
        problems = list(problem or [self.problem] * n)
        configs = [self.measure.for_mode(m) for m in (mode or [None] * n)]
        permitted = list(permitted or [None] * n)
        asks = self.sqd is not None and self.sqd.ask == "require"
        required = permitted if asks else [None] * n
        texts = [completion_text(c) for c in completions]
        # The permission check and the archive judge the source the compiler gets (None: format_error).
        sources = [source_or_none(t, load_problem(p).signature) for t, p in zip(texts, problems)]
        used = [frozenset(detect(src, p)) if src is not None else None for src, p in zip(sources, problems)]
        violations = [
            permission_violation(u, allowed) if u is not None else None for u, allowed in zip(used, permitted)
        ]
        soft = self.sqd is not None and self.sqd.violation == "soft"
        results: list[EvalResult | None] = [None] * n
        for i, reason in enumerate(violations):
            if reason and not soft:
                results[i] = EvalResult(status="forbidden", detail=reason, problem=problems[i])
        todo = [i for i in range(n) if results[i] is None]
        for name, config in dict.fromkeys((problems[i], configs[i]) for i in todo):
            idx = [i for i in todo if problems[i] == name and configs[i] == config]
            for i, r in zip(idx, self._evaluate([texts[i] for i in idx], name, config)):
                results[i] = r
        measured = [r.status in RAN_STATUSES for r in results]
        # What the compiled object shows overrides the text where it can (lab.techniques.confirm):
        # a technique the text hid still breaks the prompt's set (under the hard rule the kernel
        # was measured, and is now forbidden), and one the text only pretended does not. A
        # required set is judged here only, on kernels that ran: before the build the text
        # cannot tell a vector type under another name, and a kernel that failed stays failed.
        for i, r in enumerate(results):
            judge_requirement = required[i] is not None and measured[i]
            if used[i] is None or (r.object_facts is None and not judge_requirement):
                continue
            used[i] = frozenset(confirm(used[i], r.object_facts, problems[i]))
            violations[i] = permission_violation(used[i], permitted[i])
            if judge_requirement:
                violations[i] = violations[i] or requirement_violation(used[i], required[i])
            if violations[i] and not soft:
                code = "compiled code" if r.object_facts is not None else "code"
                results[i] = EvalResult(status="forbidden", detail=f"{code} {violations[i]}", problem=problems[i])
        # A kernel improves the archive if it beats its cell's elite as the batch found it, so
        # the QD bonus does not depend on the order of the batch: copies of one kernel, and
        # two kernels that both beat the elite, all earn it.
        entering = [
            i
            for i, r in enumerate(results)
            if self.archives is not None and r.status == "ok" and used[i] is not None and problems[i] in self.archives
        ]
        before = {i: self.archives[problems[i]].best(used[i]) for i in entering}
        improved = [False] * n
        for i in entering:
            improved[i] = before[i] is None or results[i].gflops > before[i]
            self.archives[problems[i]].add(used[i], results[i].gflops, sources[i])
        return results, violations, improved, measured, used

    def _score_batch(self, completions: list[Any], kwargs: dict[str, Any]) -> list[str]:
        """Score a batch as TRL hands it over and record it (the `last_*` fields); returns each
        row's group."""
        self.started = time.monotonic()
        problems = kwargs.get("problem") or [self.problem] * len(completions)
        self.last, self.last_violations, self.last_improved, self.last_measured, used = self._score(
            completions, problems, kwargs.get("permitted"), kwargs.get("mode")
        )
        self.last_techniques = [[t for t in TECHNIQUES if t in u] if u is not None else None for u in used]
        self.last_rarity = rarity_factors(self.last, used, problems, self.reward.rarity_bonus)
        self.last_permitted = [descriptor(p) if p is not None else None for p in kwargs.get("permitted") or []]
        self.last_rows, self.last_stages = list(kwargs.get("row") or []), list(kwargs.get("stage") or [])
        self.last_problems = list(problems)
        self.last_texts = [completion_text(c) for c in completions]
        self.last_modes = list(kwargs.get("mode") or [None] * len(completions))
        self.finished = time.monotonic()
        self.seconds = self.finished - self.started
        # TRL passes each prompt's completions as consecutive rows with the same prompt: that is the group.
        groups = kwargs.get("prompts") or kwargs.get("prompt") or list(range(len(completions)))
        return [repr(g) for g in groups]

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        self._batch = None  # this call scores the batch anew: the terms must not reuse an older scoring
        groups = self._score_batch(completions, kwargs)
        scales = [
            performance_scale(v, up, self.sqd) * r
            for v, up, r in zip(self.last_violations, self.last_improved, self.last_rarity)
        ]
        self.last_rewards = group_rewards(self.last, groups, self._reward_now(kwargs), scales)
        return self.last_rewards

    def _reward_now(self, kwargs: dict) -> RewardConfig:
        """The reward in force for this batch (RewardConfig.at_step): with `max_at_k_steps`, read
        from the trainer state TRL hands reward functions (its `global_step`); otherwise, or
        without one (outside training), the configured reward. TRL's contract names the
        argument, not its type, so it is read only where the step matters."""
        state = kwargs.get("trainer_state")
        if self.reward.max_at_k_steps is None or state is None:
            return self.reward
        return self.reward.at_step(state.global_step)

    def term(self, name: str, completions: list[Any], **kwargs: Any) -> list[float | None]:
        """One of TERMS for a batch (what `terms` return). The first term asked for a batch scores
        it; the others read that scoring, so each kernel is measured, and offered to the archive,
        once. A term asked again for the same batch starts a new one: the next step's completions
        may all be the same texts, and they are measured (and their archive gains judged) anew."""
        if name not in TERMS:
            raise ValueError(f"no reward term {name!r}: the terms are {', '.join(TERMS)}")
        texts = [completion_text(c) for c in completions]
        key = repr((texts, [kwargs.get(column) for column in _BATCH_COLUMNS]))
        batch = self._batch
        if batch is None or batch.key != key or name in batch.served:
            groups = self._score_batch(completions, kwargs)
            terms = term_rewards(
                self.last,
                groups,
                self._reward_now(kwargs),
                self.last_violations,
                self.last_improved,
                self.sqd,
                unscored_as_none=self.unscored_as_none,
                rarity=self.last_rarity,
            )
            batch = self._batch = _Batch(key, terms)
            # As TRL sums the terms: a None term counts 0, a row with every term None is unscored.
            self.last_rewards = [
                None
                if all(v is None for v in values)
                else sum(w * v for w, v in zip(TERM_WEIGHTS, values) if v is not None)
                for values in zip(*(terms[t] for t in TERMS))
            ]
        batch.served.add(name)
        # The step log's reward time covers every term's call (the later ones only read the scoring).
        self.finished = time.monotonic()
        self.seconds = self.finished - self.started
        return list(batch.terms[name])
