"""Prompt text: the problem's prompt, optionally with the sentence that states which
optimization techniques are permitted (the form SQD uses), and its parser.

    >>> text = prompt_text("dgemm", frozenset({"simd", "openmp"}))
    >>> text.splitlines()[-1]
    'Permitted optimization techniques: simd, openmp. Not permitted: loop_reorder, cache_blocking, unrolling, packing, register_blocking.'
    >>> sorted(permitted_in(text))
    ['openmp', 'simd']
    >>> permitted_in(prompt_text("dgemm")) is None
    True
"""

from __future__ import annotations

import re

from lab.problems import load_problem
from lab.techniques import TECHNIQUES

_SENTENCE = "Permitted optimization techniques: {names}. Not permitted: {others}."
_PARSE = re.compile(r"Permitted optimization techniques: ([a-z_, ]+)\.")


def prompt_text(problem: str, permitted: frozenset[str] | None = None) -> str:
    """The user prompt for `problem`; with `permitted`, the techniques sentence is appended."""
    base = load_problem(problem).prompt
    if permitted is None:
        return base
    unknown = set(permitted) - set(TECHNIQUES)
    if unknown:
        raise ValueError(f"unknown technique(s): {', '.join(sorted(unknown))}; known: {', '.join(TECHNIQUES)}")
    names = ", ".join(t for t in TECHNIQUES if t in permitted) or "none"
    others = ", ".join(t for t in TECHNIQUES if t not in permitted) or "none"
    return f"{base}\n\n{_SENTENCE.format(names=names, others=others)}"


def permitted_in(prompt: str) -> frozenset[str] | None:
    """The permitted set a prompt states, or None if it states none."""
    m = _PARSE.search(prompt)
    if not m:
        return None
    return frozenset(t.strip() for t in m.group(1).split(",") if t.strip() in TECHNIQUES)
