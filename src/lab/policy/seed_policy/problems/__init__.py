"""The kernel generators, one module per problem under harness/, registered by name.

    >>> generator_for("dot").families
    ('naive', 'intrinsics')
    >>> sorted(generator_for("dgemv").techniques(KernelSpec("dgemv", "naive", regblock=(4, 1))))
    ['register_blocking', 'unrolling']

Each module (dgemm.py, dgemv.py, dot.py, ...) writes its problem's kernel families and exposes a
`GENERATOR` (base.ProblemGenerator): the families, `render`, `draw`, `defects`, `sweep` and
`techniques`, the techniques a spec uses by construction. lab.policy.seed_policy.generator does
what is the same for every problem (the syntax slip, styles, the sampling loop over permitted
sets and execution models) through `generator_for`. Shared code: base.py (the spec and the
interface), dense.py (DGEMM and DGEMV), suite.py (the other problems).

To give a new problem a generator, write its module on the model of the others and add it to
`_MODULES`; tests/test_problem_plugins.py checks that every problem under harness/ has one.
"""

from __future__ import annotations

from lab.policy.seed_policy.problems import dgemm, dgemv, dot, histogram, jacobi2d, prefix_sum, spmv, transpose
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator

__all__ = ["GENERATORS", "KernelSpec", "ProblemGenerator", "UnknownGenerator", "generator_for"]

_MODULES = (dgemm, dgemv, dot, jacobi2d, spmv, prefix_sum, histogram, transpose)  # the seed corpus's order
GENERATORS: dict[str, ProblemGenerator] = {m.GENERATOR.problem: m.GENERATOR for m in _MODULES}


class UnknownGenerator(ValueError):
    """Raised for a problem with no registered kernel generator."""


def generator_for(problem: str) -> ProblemGenerator:
    """The registered generator of `problem`; an unknown name raises UnknownGenerator with the known ones."""
    try:
        return GENERATORS[problem]
    except (KeyError, TypeError):  # TypeError: an unhashable name
        raise UnknownGenerator(
            f"no kernel generator for problem {problem!r}; registered: {', '.join(GENERATORS)} "
            "(a new problem's module goes in lab/policy/seed_policy/problems/, see its __init__)"
        ) from None
