"""Rewards: EvalResult -> float, and TRL-contract reward functions.

Tiers follow the paper by default: format or library/permission violation -100,
compile error -40, timeout -30, runtime error -20, wrong result -10; correct code
earns a positive performance term: its GFLOPS (the paper's choice), its speedup
over the problem's textbook baseline, or log(1 + speedup).

    >>> from lab.evaluate import EvalResult
    >>> cfg = RewardConfig()
    >>> reward_from_result(EvalResult(status="compile_error"), cfg)
    -40.0
    >>> reward_from_result(EvalResult(status="ok", gflops=12.5, speedup=6.0), cfg)
    12.5
    >>> reward_from_result(EvalResult(status="ok", gflops=12.5, speedup=6.0), RewardConfig(positive="speedup"))
    6.0

A TRL reward function takes the batch of completions (plain strings, or chat
messages) and returns one float each:

    >>> fake = lambda completions, problem: [EvalResult(status="wrong_result") for _ in completions]
    >>> fn = make_reward_fn("dgemm", cfg, evaluator=fake)
    >>> fn(["int x;", [{"role": "assistant", "content": "..."}]])
    [-10.0, -10.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING:
    from lab.evaluate import EvalConfig, EvalResult

STATUSES = ("ok", "format_error", "forbidden", "compile_error", "timeout", "runtime_error", "wrong_result")


@dataclass(frozen=True)
class RewardConfig:
    """Penalty per failure status and the positive term for correct code."""

    penalties: dict[str, float] = field(default_factory=lambda: {
        "format_error": -100.0, "forbidden": -100.0, "compile_error": -40.0,
        "timeout": -30.0, "runtime_error": -20.0, "wrong_result": -10.0,
    })
    positive: Literal["gflops", "speedup", "log_speedup"] = "gflops"

    def __post_init__(self):
        if self.positive not in ("gflops", "speedup", "log_speedup"):
            raise ValueError(f"unknown positive reward term {self.positive!r}; use gflops, speedup or log_speedup")
        missing = set(STATUSES) - {"ok"} - set(self.penalties)
        if missing:
            raise ValueError(f"reward penalties missing for: {', '.join(sorted(missing))}")

    def __hash__(self):
        return hash((tuple(sorted(self.penalties.items())), self.positive))


def reward_from_result(result: EvalResult, config: RewardConfig) -> float:
    """The scalar reward of one evaluated completion."""
    if result.status != "ok":
        return float(config.penalties[result.status])
    if config.positive == "gflops":
        return float(result.gflops)
    if result.speedup is None:  # only when the baseline was not timed (EvalConfig(baseline=False))
        raise ValueError(f"the {config.positive!r} reward needs the baseline timed (EvalConfig(baseline=True))")
    if config.positive == "speedup":
        return float(result.speedup)
    return math.log1p(result.speedup)


def completion_text(completion: Any) -> str:
    """TRL passes plain strings, or for chat data a list of messages: take the assistant text."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content", "") for m in completion if isinstance(m, dict))
    if isinstance(completion, dict):
        return completion.get("content", "")
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


def make_reward_fn(problem: str, config: RewardConfig | None = None, eval_config: EvalConfig | None = None,
                   evaluator: Callable[..., list[EvalResult]] | None = None) -> Callable[..., list[float]]:
    """A TRL reward function `(completions, **kwargs) -> list[float]` for one problem.

    The whole batch is scored in parallel through `evaluate_batch`. A dataset column
    named `problem` (forwarded by TRL as a keyword) overrides the default per row.
    """
    config = config or RewardConfig()
    if evaluator is None:
        from lab.evaluate import EvalConfig, evaluate_batch

        eval_cfg = eval_config or EvalConfig(reward=config)

        def evaluator(texts, problem):
            return evaluate_batch(texts, problem, eval_cfg, progress=False)

    def reward(completions: list[Any], **kwargs: Any) -> list[float]:
        texts = [completion_text(c) for c in completions]
        problems = kwargs.get("problem") or [problem] * len(texts)
        out: list[float] = [0.0] * len(texts)
        for name in dict.fromkeys(problems):
            idx = [i for i, p in enumerate(problems) if p == name]
            for i, res in zip(idx, evaluator([texts[i] for i in idx], name)):
                out[i] = reward_from_result(res, config)
        return out

    reward.__name__ = f"{problem}_{config.positive}_reward"
    return reward
