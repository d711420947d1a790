"""Prompt text: one phrasing of the problem's prompt (a training phrasing, or a held-out
evaluation one: lab.harness.problems), optionally in an execution model and with the
sentence that states which optimization techniques are permitted, or required (the forms SQD
uses), and its parsers. Techniques are named by their registry wording (lab.techniques.REGISTRY).

    >>> text = prompt_text("dgemm", frozenset({"simd", "openmp"}))
    >>> text.splitlines()[-1]
    'Permitted optimization techniques: SIMD vectorization, OpenMP multithreading. Not permitted: loop reordering, cache blocking, loop unrolling, data packing, register blocking.'
    >>> sorted(permitted_in(text))
    ['openmp', 'simd']
    >>> permitted_in(prompt_text("dgemm")) is None
    True
    >>> asked = prompt_text("dgemm", frozenset({"simd"}), required=True)
    >>> asked.splitlines()[-1].split(".")[0], sorted(required_in(asked)), required_in(text)
    ('Required optimization techniques: SIMD vectorization', ['simd'], None)
"""

from __future__ import annotations

import re

from lab.harness.problems import load_problem, render_phrasing
from lab.techniques import REGISTRY, TECHNIQUES, problem_techniques

_SENTENCE = "Permitted optimization techniques: {names}. Not permitted: {others}."
# A required set is stated in the same shape, so a policy that reads one reads the other.
_REQUIRED = "Required optimization techniques: {names}. Not permitted: {others}."
_PARSE = re.compile(r"(Permitted|Required) optimization techniques: ([A-Za-z, ]+)\.")


def _words(names) -> str:
    return ", ".join(REGISTRY[t].wording for t in TECHNIQUES if t in names) or "none"


_MODE_SENTENCE = {
    "serial": "Execution model: serial. The function runs on one thread; do not use OpenMP "
    "(no #pragma omp, no omp.h, no omp_ functions).",
    "openmp": "Execution model: OpenMP. The function runs with {threads} OpenMP threads available; you may use OpenMP.",
}


def prompt_texts(problem: str, split: str = "train", mode: str | None = None, threads: int = 2) -> list[str]:
    """Every phrasing of one split (train | eval) as `prompt_text` states it, in order."""
    count = len(load_problem(problem).phrasings(split))
    return [prompt_text(problem, None, mode, threads, phrasing=i, split=split) for i in range(count)]


def prompt_text(
    problem: str,
    permitted: frozenset[str] | None = None,
    mode: str | None = None,
    threads: int = 2,
    phrasing: int | str = 0,
    split: str = "train",
    tier: str | None = None,
    required: bool = False,
) -> str:
    """The user prompt for `problem`: phrasing number `phrasing` (modulo their number) of the
    `split` set (train: what training shows; eval: held out), or `phrasing` itself when it is
    text (already in the mode: no markup). With `mode` (serial | openmp),
    the execution model is stated and, in serial mode, the phrasing's permission to use OpenMP
    is dropped (None: the phrasing as it is, which permits OpenMP); with `permitted`, the
    techniques sentence is appended: the permitted ones, and the rest of the techniques that
    apply to the problem (lab.techniques.problem_techniques; OpenMP is never offered in serial
    mode). `required`: the sentence asks for every one of the `permitted` techniques instead of
    allowing them. `tier` is the target the phrasing names (None: the tier this process works at,
    lab.harness.target)."""
    if isinstance(phrasing, str):  # a text of the caller's (the seed corpus's recombined phrasings)
        base = phrasing
    else:
        texts = load_problem(problem).phrasings(split)
        base = render_phrasing(texts[phrasing % len(texts)], openmp=mode != "serial", tier=tier)
    if mode is not None:
        if mode not in _MODE_SENTENCE:
            raise ValueError(f"unknown mode {mode!r}; known: {', '.join(_MODE_SENTENCE)}")
        base = f"{base}\n\n{_MODE_SENTENCE[mode].format(threads=threads)}"
    if permitted is None:
        return base
    unknown = set(permitted) - set(TECHNIQUES)
    if unknown:
        raise ValueError(f"unknown technique(s): {', '.join(sorted(unknown))}; known: {', '.join(TECHNIQUES)}")
    applicable = [t for t in problem_techniques(problem) if not (mode == "serial" and t == "openmp")]
    outside = set(permitted) - set(applicable)
    if outside:
        where = f"{problem} in serial mode" if mode == "serial" else problem
        raise ValueError(
            f"technique(s) {', '.join(sorted(outside))} do not apply to {where}; these do: {', '.join(applicable)}"
        )
    others = set(applicable) - set(permitted)
    sentence = _REQUIRED if required else _SENTENCE
    return f"{base}\n\n{sentence.format(names=_words(permitted), others=_words(others))}"


def permitted_in(prompt: str) -> frozenset[str] | None:
    """The set a prompt permits (a required set is permitted too), or None if it states none."""
    m = _PARSE.search(prompt)
    if not m:
        return None
    by_wording = {t.wording: t.name for t in REGISTRY.values()}
    return frozenset(by_wording[w.strip()] for w in m.group(2).split(",") if w.strip() in by_wording)


def required_in(prompt: str) -> frozenset[str] | None:
    """The set a prompt requires, or None if it requires none (it states none, or permits one)."""
    m = _PARSE.search(prompt)
    return permitted_in(prompt) if m and m.group(1) == "Required" else None
