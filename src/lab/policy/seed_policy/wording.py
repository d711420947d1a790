"""Varied wording for the seed corpus: prompts recombined from a problem's training phrasings.

A model trained on four fixed phrasings of each prompt learns their surface, not their
content: the first seed policy trained that way wrote well on its training phrasings
(58% correct DGEMM kernels) and garbage on held-out ones (0 of 64, most with no function at
all). A code model learns from text that words the same request in countless ways; this
module gives the seed corpus some of that variety from the training phrasings alone, so
held-out phrasings stay unseen:

- the phrasing (rendered in its execution model) is cut into units: its signature block,
  and its sentences and bullet lines;
- a recombined prompt keeps the signature block and a random subset of the units of all
  the problem's training phrasings (`MIN_UNITS` to `MAX_UNITS`), in random order, in one to three
  paragraphs, with a few words dropped (`DROP_RATE`) or swapped for words of other
  problems' phrasings (`SWAP_RATE`), and now and then a sentence that says nothing about
  the task (`FILLERS`).

    >>> rng = random.Random(0)
    >>> text = recombined("dot", "serial", rng)
    >>> "    double dot(int n, const double *x, const double *y);" in text
    True
"""

from __future__ import annotations

import random
import re
from functools import cache

from lab.harness import target
from lab.harness.problems import load_problem, render_phrasing

MIN_UNITS, MAX_UNITS = 1, 10  # up to about one phrasing's worth: longer prompts would slow the build
DROP_RATE = 0.08  # per word of a unit: dropped...
SWAP_RATE = 0.05  # ...or replaced by a word of another problem's phrasings
FILLER_RATE = 0.3  # share of prompts with one filler sentence
FILLERS = (
    "Thanks in advance.",
    "This is for a benchmark.",
    "Please keep it readable.",
    "It will be called many times.",
    "Correctness matters as much as speed.",
    "I will test it on several sizes.",
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def units(text: str) -> tuple[str, list[str]]:
    """(the signature block, the other units: sentences and bullet lines) of a rendered phrasing."""
    signature, rest = "", []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith("    "):
            signature = paragraph
            continue
        for line in paragraph.splitlines():
            line = line.strip()
            if line.startswith("- "):
                rest.append(line)
            elif line:
                rest += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return signature, rest


@cache
def _pool(problem: str, mode: str | None, tier: str) -> tuple[str, tuple[str, ...]]:
    openmp = mode != "serial"
    signature, pool = "", []
    for text in load_problem(problem).train_prompts:
        sig, rest = units(render_phrasing(text, openmp, tier))
        signature = signature or sig
        pool += [u for u in rest if u not in pool]
    return signature, tuple(pool)


@cache
def _vocabulary() -> tuple[str, ...]:
    """The words of every problem's training phrasings (the pool word swaps draw from)."""
    from lab.harness.problems import list_problems

    words = {w for p in list_problems() for text in load_problem(p).train_prompts for w in text.split()}
    return tuple(sorted(w for w in words if w.isalpha() and "omp" not in w.lower()))


def _noisy(unit: str, rng: random.Random) -> str:
    """The unit with some words dropped and some swapped for others (never the code fence)."""
    out = []
    for w in unit.split(" "):
        draw = rng.random()
        if "```" in w or draw >= DROP_RATE + SWAP_RATE:
            out.append(w)
        elif draw >= DROP_RATE:
            out.append(rng.choice(_vocabulary()))
    return " ".join(out) if len(out) > 2 else unit


def recombined(problem: str, mode: str | None, rng: random.Random, tier: str = "avx512") -> str:
    """A prompt text for `problem` in `mode` made of its training phrasings' units (see above),
    naming the target `tier` (lab.harness.target): one of the units that name it is always among
    them, since the kernel that answers is written for it."""
    signature, pool = _pool(problem, mode, tier)
    chosen = rng.sample(pool, rng.randint(min(MIN_UNITS, len(pool)), min(MAX_UNITS, len(pool))))
    isa = target.TIERS[tier].isa_words
    if not any(isa in u for u in chosen):
        chosen[rng.randrange(len(chosen))] = rng.choice([u for u in pool if isa in u])
    chosen = [u if isa in u else _noisy(u, rng) for u in chosen]  # the target is never garbled
    if rng.random() < FILLER_RATE:
        chosen.insert(rng.randrange(len(chosen) + 1), rng.choice(FILLERS))
    cuts = sorted(rng.sample(range(1, len(chosen)), min(rng.randint(0, 2), len(chosen) - 1)))
    paragraphs = [chosen[a:b] for a, b in zip([0, *cuts], [*cuts, len(chosen)])]
    texts = ["\n".join(p) if p[0].startswith("- ") else " ".join(p) for p in paragraphs]
    texts.insert(rng.randrange(len(texts) + 1), signature)
    return "\n\n".join(texts)
