"""The seed policy's training corpus: prompt -> completion pairs written by the generator.

Each record is what a base code model might be asked and might answer:

- prompt: the problem's prompt, and for CONDITIONED_RATE of the records the sentence
  stating a permitted technique subset (random size, as SQD samples them);
- completion: a chat-style answer, a ```c fenced block with now and then a line of
  prose; it respects the permitted set in most records (RESPECT_RATE);
- the mix of a base model: mostly plain correct code, a minority of optimized
  variants, and some defective ones (DEFECT_RATE: off-by-one tails, missing
  zeroing, syntax slips, wrong indices).

`make_corpus(n, seed)` is deterministic for a seed.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from lab.policy.prompts import prompt_text
from lab.policy.seed_policy.generator import KernelSpec, random_spec, render
from lab.techniques import TECHNIQUES

PROBLEM_WEIGHTS = {"dgemm": 0.85, "dgemv": 0.15}
CONDITIONED_RATE = 0.75  # share of prompts that state a permitted set
RESPECT_RATE = 0.92  # share of conditioned completions that stay inside it
DEFECT_RATE = 0.18
OPTIMIZE_RATE = 0.3  # share drawn with optional techniques switched on more often

_LEADS = [
    "",
    "",
    "",
    "Here is an implementation:\n\n",
    "Sure! Here is the function.\n\n",
    "Here's a version that should work for any n:\n\n",
]
_TAILS = ["", "", "", "\n\nThis handles any positive n.", "\n\nCompile with -O3 -march=native -fopenmp."]


@dataclass(frozen=True)
class Example:
    problem: str
    permitted: tuple[str, ...] | None
    prompt: str
    completion: str
    techniques: tuple[str, ...]
    correct: bool
    family: str

    def to_dict(self) -> dict:
        return asdict(self)


def random_permitted(rng: random.Random) -> frozenset[str]:
    """A technique subset: its size uniform in 0..len(TECHNIQUES), then its members."""
    size = rng.randint(0, len(TECHNIQUES))
    return frozenset(rng.sample(TECHNIQUES, size))


def as_completion(code: str, rng: random.Random) -> str:
    lead = rng.choice(_LEADS)
    return f"{lead}```c\n{code}```{rng.choice(_TAILS)}"


def make_example(rng: random.Random) -> Example:
    problem = rng.choices(list(PROBLEM_WEIGHTS), list(PROBLEM_WEIGHTS.values()))[0]
    permitted = random_permitted(rng) if rng.random() < CONDITIONED_RATE else None
    respect = permitted is not None and rng.random() < RESPECT_RATE
    spec: KernelSpec = random_spec(
        rng, problem, permitted if respect else None, defect_rate=DEFECT_RATE, optimize=rng.random() < OPTIMIZE_RATE
    )
    if respect and permitted:
        # Asked "you may use X", a model tends to use X: of three draws keep the one that
        # uses the most permitted techniques. This is what makes the prompt matter.
        for _ in range(2):
            other = random_spec(rng, problem, permitted, defect_rate=DEFECT_RATE, optimize=True)
            if len(other.techniques() & permitted) > len(spec.techniques() & permitted):
                spec = other
    return Example(
        problem=problem,
        permitted=tuple(t for t in TECHNIQUES if t in permitted) if permitted is not None else None,
        prompt=prompt_text(problem, permitted),
        completion=as_completion(render(spec), rng),
        techniques=tuple(sorted(spec.techniques())),
        correct=spec.correct,
        family=spec.family,
    )


def make_corpus(n: int, seed: int = 0) -> list[Example]:
    rng = random.Random(seed)
    return [make_example(rng) for _ in range(n)]
