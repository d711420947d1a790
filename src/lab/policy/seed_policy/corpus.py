"""The seed policy's training corpus: prompt -> completion pairs written by the generator.

Each record is what a base code model might be asked and might answer:

- prompt: one of the training phrasings of the prompt of one of the lab's problems
  (PROBLEM_WEIGHTS), as written or (RECOMBINE_RATE) recombined from their sentences
  (lab.policy.seed_policy.wording: never a held-out evaluation phrasing), in one execution
  model (MODE_WEIGHTS: serial, OpenMP with a thread count, or the problem's own text,
  which permits OpenMP), and for CONDITIONED_RATE of the records the sentence stating a
  permitted subset of the techniques that apply to the problem (random size, as SQD
  samples them);
- completion: a chat-style answer, a ```c fenced block with now and then a line of
  prose; it respects the permitted set in most records (RESPECT_RATE);
- the mix of a base model: mostly plain correct code, a minority of optimized
  variants, and some defective ones (DEFECT_RATE: off-by-one tails, missing
  zeroing, syntax slips, wrong indices). Serial prompts get no OpenMP; OpenMP prompts
  get it in about 40% of the completions (fewer for prefix_sum, whose one OpenMP family is
  the two-pass scan).

`make_corpus(n, seed)` is deterministic for a seed; `make_corpus(n, seed, problems)` draws only
from those problems (their PROBLEM_WEIGHTS renormalized; at least one), as the smoke preset does.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from lab.harness.problems import load_problem
from lab.policy.prompts import prompt_text
from lab.policy.seed_policy.generator import KernelSpec, random_spec, render
from lab.policy.seed_policy.wording import recombined
from lab.techniques import problem_techniques

# DGEMM keeps the largest share: its kernels are the longest and the most varied.
PROBLEM_WEIGHTS = {
    "dgemm": 0.4,
    "dgemv": 0.08,
    "dot": 0.085,
    "jacobi2d": 0.09,
    "spmv": 0.085,
    "prefix_sum": 0.085,
    "histogram": 0.085,
    "transpose": 0.085,
}
TRAIN_PHRASINGS = {p: load_problem(p).train_prompts for p in PROBLEM_WEIGHTS}
RECOMBINE_RATE = 0.85  # share of prompts recombined from the training phrasings' sentences
# None: the problem's own prompt, which states no execution model (and permits OpenMP).
MODE_WEIGHTS = {None: 0.3, "serial": 0.35, "openmp": 0.35}
#: The CPU each prompt names (lab.harness.target), and so the intrinsics its kernel may use: one
#: policy for every x86-64 tier, conditioned on the prompt's target sentence.
TIER_WEIGHTS = {"avx512": 0.45, "avx2": 0.45, "sse4": 0.1}
THREADS = (1, 2, 2, 2, 4)  # thread counts an OpenMP prompt states
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
    mode: str | None
    permitted: tuple[str, ...] | None
    prompt: str
    completion: str
    techniques: tuple[str, ...]
    correct: bool
    family: str
    tier: str = "avx512"

    def to_dict(self) -> dict:
        return asdict(self)


def random_permitted(rng: random.Random, problem: str = "dgemm", mode: str | None = None) -> frozenset[str]:
    """A subset of the techniques that apply to `problem` (without OpenMP in serial mode):
    its size uniform in 0..their number, then its members."""
    techniques = [t for t in problem_techniques(problem) if not (mode == "serial" and t == "openmp")]
    size = rng.randint(0, len(techniques))
    return frozenset(rng.sample(techniques, size))


def as_completion(code: str, rng: random.Random) -> str:
    lead = rng.choice(_LEADS)
    return f"{lead}```c\n{code}```{rng.choice(_TAILS)}"


def make_example(rng: random.Random, problems: tuple[str, ...] | None = None) -> Example:
    weights = {p: w for p, w in PROBLEM_WEIGHTS.items() if problems is None or p in problems}
    problem = rng.choices(list(weights), list(weights.values()))[0]
    mode = rng.choices(list(MODE_WEIGHTS), list(MODE_WEIGHTS.values()))[0]
    threads = rng.choice(THREADS)
    tier = rng.choices(list(TIER_WEIGHTS), list(TIER_WEIGHTS.values()))[0]
    permitted = random_permitted(rng, problem, mode) if rng.random() < CONDITIONED_RATE else None
    respect = permitted is not None and rng.random() < RESPECT_RATE
    optimize = rng.random() < OPTIMIZE_RATE
    spec: KernelSpec = random_spec(
        rng, problem, permitted if respect else None, defect_rate=DEFECT_RATE, optimize=optimize, mode=mode, tier=tier
    )
    if respect and permitted:
        # Asked "you may use X", a model tends to use X: of three draws keep the one that
        # uses the most permitted techniques. This is what makes the prompt matter.
        for _ in range(2):
            other = random_spec(rng, problem, permitted, defect_rate=DEFECT_RATE, optimize=True, mode=mode, tier=tier)
            if len(other.techniques() & permitted) > len(spec.techniques() & permitted):
                spec = other
    order = problem_techniques(problem)
    return Example(
        problem=problem,
        mode=mode,
        permitted=tuple(t for t in order if t in permitted) if permitted is not None else None,
        prompt=prompt_text(
            problem, permitted, mode, threads, phrasing=training_wording(rng, problem, mode, tier), tier=tier
        ),
        completion=as_completion(render(spec), rng),
        techniques=tuple(sorted(spec.techniques())),
        correct=spec.correct,
        family=spec.family,
        tier=tier,
    )


def training_wording(rng: random.Random, problem: str, mode: str | None, tier: str) -> int | str:
    """A training phrasing as written (its number) or, for RECOMBINE_RATE of the prompts, one
    recombined from the training phrasings' sentences (lab.policy.seed_policy.wording): the
    wordings the corpus's prompts have (and a reworded warm start's, lab.rl.warm_start)."""
    if rng.random() < RECOMBINE_RATE:
        return recombined(problem, mode, rng, tier)
    return rng.randrange(len(TRAIN_PHRASINGS[problem]))


def make_corpus(n: int, seed: int = 0, problems: tuple[str, ...] | None = None) -> list[Example]:
    if problems is not None and not problems:  # else every draw would pick from no problem at all
        raise ValueError("no corpus for an empty set of problems: name at least one (or None for all of them)")
    unknown = sorted(set(problems) - set(PROBLEM_WEIGHTS)) if problems else []
    if unknown:
        raise ValueError(f"no corpus for problem(s) {', '.join(unknown)} (known: {', '.join(PROBLEM_WEIGHTS)})")
    rng = random.Random(seed)
    return [make_example(rng, problems) for _ in range(n)]
