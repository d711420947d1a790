"""The excessive-speedup guard: a correct kernel far faster than anything its run had found is
flagged, and its text kept for a person to read.

A policy that finds a hole in the harness shows it as a jump: a kernel much faster than the
best its run had measured before. KernelBench-style evaluations flag such results for reading
before they count. Here each training step's correct kernels are compared with the best rate
of the same (problem, mode) in the run's earlier steps; one above `factor` times it is flagged.
The flag changes no reward (the harness's checks have passed it, and nobody reads it while the
run trains): it marks the training sample (`excessive`) and writes the kernel, with what it
was compared with, to the run's `excessive.jsonl`, where the study's report counts them.
The first correct kernel of a (problem, mode) has no prior and is never flagged; a flagged one
becomes the prior (a real jump is flagged once, not at every step after it).

    >>> guard = ExcessiveGuard(2.0)
    >>> guard.check([("dgemm", "serial", 20.0)]), guard.check([("dgemm", "serial", 30.0), ("dgemm", "serial", 45.0)])
    ([False], [False, True])
    >>> guard.check([("dgemm", "serial", 80.0)]), guard.best
    ([False], {('dgemm', 'serial'): 80.0})
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class ExcessiveGuard:
    """Flags correct kernels above `factor` times the best rate of their (problem, mode) in the
    earlier batches. `check` takes a batch's (problem, mode, GFLOPS or None) rows."""

    def __init__(self, factor: float, best: dict[tuple[str, str | None], float] | None = None):
        self.factor = factor
        self.best: dict[tuple[str, str | None], float] = dict(best or {})

    @classmethod
    def from_samples(cls, factor: float, samples: Iterable[dict]) -> ExcessiveGuard:
        """The guard as a resumed run left it: the best ok rate per (problem, mode) of the
        training samples it had recorded."""
        guard = cls(factor)
        guard.update([(s["problem"], s.get("mode"), s["gflops"]) for s in samples if s.get("status") == "ok"])
        return guard

    def prior(self, problem: str, mode: str | None) -> float | None:
        return self.best.get((problem, mode))

    def check(self, rows: Sequence[tuple[str, str | None, float | None]]) -> list[bool]:
        """Whether each row (None: not a correct kernel) is excessive against the earlier
        batches; then the batch's rates join the best. Copies in one batch are judged alike."""
        flags = []
        for problem, mode, gflops in rows:
            prior = self.prior(problem, mode)
            flags.append(gflops is not None and prior is not None and gflops > self.factor * prior)
        self.update(rows)
        return flags

    def update(self, rows: Iterable[tuple[str, str | None, float | None]]) -> None:
        for problem, mode, gflops in rows:
            if gflops is not None and gflops > self.best.get((problem, mode), float("-inf")):
                self.best[(problem, mode)] = gflops
