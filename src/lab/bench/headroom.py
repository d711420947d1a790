"""`make headroom`: how much faster than its naive kernel each suite entry can get on this machine.

    python -m lab.bench.headroom [--problem P ...] [--modes serial,openmp] [--rounds 5]
                                 [--sizes timed,cache,N...] [--out results/suite/headroom.json]

RL can only find speed that is there: an entry whose best known kernel is 1.1x the naive one
cannot show a gain beyond the noise of its measurement. For every (problem, mode) and size:

1. a scan, one round: every kernel of the generator's sweep allowed in the mode (serial: no
   OpenMP construct, lab.policy.seed_policy.generator.serial_safe) and every example file of
   harness/<problem>/examples, each scored as the reward scores it (lab.harness.evaluate);
2. `rounds` paired rounds of three kernels: naive.c, the best example and the best sweep
   kernel of the scan, one after another in an order rotated each round, so a round's three
   share the machine's state. A kernel's ratio to naive.c is taken within its round;
3. the ceiling: the better of the two (example or sweep) over naive.c, median of the rounds and
   its lowest round, against THRESHOLD; beside it the roofline (lab.harness.plausibility.roofline:
   the calibrated per-level bandwidths and the tier's FMA peak) over naive.c, and what limits it.

Sizes: `timed`, the size the reward times (Problem.timed_n of the mode), and `cache`, the largest
size whose working set fits in half the L3 of the CPUs used (never above the timed size): a
memory-bound entry may have headroom there that DRAM takes away at its timed size. A number
names a candidate size itself (for choosing a problem's `timed_n`, harness/README.md).

Kernels are measured one at a time (one job): two at once would share the L3 and the memory
bandwidth and lower every memory-bound figure. The report is written after each entry, and a run
started again with the same output keeps the entries it holds for this machine class and size
(nothing lost if a long run dies).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path

from lab import paths
from lab.analysis import plots
from lab.config import MODES, MeasureConfig
from lab.files import write_json
from lab.harness import plausibility
from lab.harness.evaluate import evaluate_batch
from lab.harness.machine import machine_class, machine_summary
from lab.harness.problems import list_problems, load_problem
from lab.policy.seed_policy.generator import render, serial_safe, sweep_specs
from lab.results import machine_path, report_provenance

#: A ceiling below this (best known / naive, median of the paired rounds) leaves too little for RL
#: to find within the spread of a memory-bound measurement (+-20% between rounds, docs/performance.md).
THRESHOLD = 1.5
SIZES = ("timed", "cache")
NAIVE = "naive.c"

#: (sources, problem, measure config) -> results with .status and .gflops, as evaluate_batch.
Evaluate = Callable[[list[str], str, MeasureConfig], list]


def _evaluate(sources: list[str], problem: str, config: MeasureConfig) -> list:
    return evaluate_batch(sources, problem, config, cache=False, n_jobs=1, progress=len(sources) > 3)


def candidates(problem: str, mode: str) -> dict[str, str]:
    """name -> C source of the kernels scanned for (problem, mode): its example files (`example:`)
    and the generator's sweep (`sweep:`), without the sweep's OpenMP kernels in serial mode."""
    out = {}
    for path in sorted((paths.harness_dir() / problem / "examples").glob("*.c")):
        out[f"example:{path.name}"] = path.read_text()
    for i, spec in enumerate(sweep_specs(problem)):
        if mode == "serial" and not serial_safe(spec):
            continue
        out[f"sweep:{i:02d}:{_label(spec)}"] = render(spec)
    return out


def _label(spec) -> str:
    """A sweep kernel's short description: its family and the parameters that are set."""
    parts = [spec.family]
    for key in ("order", "tile", "unroll", "simd", "omp", "regblock", "kc"):
        value = getattr(spec, key)
        if value not in (None, 1) and not (key == "order" and value == "ijk"):
            parts.append(f"{key}={'x'.join(map(str, value)) if isinstance(value, tuple) else value}")
    return ",".join(parts)


def size_for(problem: str, mode: str, which: str, threads: int) -> int | None:
    """The n of a size name in execution model `mode`: `timed` (Problem.timed_n) or `cache` (the
    largest n whose working set fits in half the calibrated L3 of `threads` CPUs, at most the timed
    n; None if none fits)."""
    p = load_problem(problem)
    if which == "timed":
        return p.timed_n(mode)
    if which == "cache":
        return plausibility.cache_resident_n(p, plausibility.cache_bytes(threads)["L3"] / 2, p.timed_n(mode))
    if which.isdigit() and int(which) > 0:  # a candidate size, named by its n
        return int(which)
    raise ValueError(f"unknown size {which!r}; known: {', '.join(SIZES)} or a positive n")


def _best(scan: dict[str, dict], prefix: str) -> str | None:
    ok = {k: v for k, v in scan.items() if k.startswith(prefix) and k != f"example:{NAIVE}" and v["status"] == "ok"}
    return max(ok, key=lambda k: ok[k]["rate"]) if ok else None


def ceiling(rounds: list[dict[str, float | None]], contenders: list[str]) -> tuple[float | None, float | None]:
    """(median, lowest) over the rounds of the best contender's rate over naive.c's in the same
    round; rounds where naive.c or every contender failed are left out.

    >>> ceiling([{"naive.c": 2.0, "a": 3.0, "b": 4.0}, {"naive.c": 2.0, "a": 5.0, "b": None},
    ...          {"naive.c": None, "a": 9.0, "b": 9.0}], ["a", "b"])
    (2.25, 2.0)
    """
    ratios = []
    for r in rounds:
        best = max((r[c] for c in contenders if r.get(c)), default=None)
        if r.get(NAIVE) and best:
            ratios.append(best / r[NAIVE])
    return (statistics.median(ratios), min(ratios)) if ratios else (None, None)


def entry(
    problem: str, mode: str, n: int, threads: int, rounds: int, evaluate: Evaluate = _evaluate, log=print
) -> dict:
    """The headroom of (problem, mode) at size n: the scan, the paired rounds, the ceiling and the
    roofline (module docstring)."""
    config = MeasureConfig(n=n, threads=threads).for_mode(mode)  # serial: 1 thread
    threads = config.threads
    sources = candidates(problem, mode)
    log(f"{problem} {mode} n={n}: scanning {len(sources)} kernels")
    scan = {
        # The rate in problem.unit, and the speedup over the driver's textbook baseline timed
        # beside it (the reward's speedup).
        name: {
            "status": r.status,
            "rate": r.gflops if r.status == "ok" else None,
            "speedup": r.speedup if r.status == "ok" else None,
        }
        for name, r in zip(sources, evaluate(list(sources.values()), problem, config))
    }
    if f"example:{NAIVE}" not in scan:
        raise ValueError(f"{problem} has no examples/{NAIVE}: the headroom is measured against it")
    best_example, best_sweep = _best(scan, "example:"), _best(scan, "sweep:")
    contenders = [k for k in (best_example, best_sweep) if k]
    paired = [f"example:{NAIVE}", *contenders]
    measured = []
    for r in range(rounds):
        order = paired[r % len(paired) :] + paired[: r % len(paired)]  # rotated: each goes first in turn
        results = evaluate([sources[k] for k in order], problem, config)
        measured.append({_short(k): (res.gflops if res.status == "ok" else None) for k, res in zip(order, results)})
        log(f"  round {r + 1}/{rounds}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in measured[-1].items()))
    median, lowest = ceiling(measured, [_short(k) for k in contenders])
    # The contender that holds the ceiling: the one with the higher median ratio to naive.c.
    best = max((_short(k) for k in contenders), key=lambda k: ceiling(measured, [k])[0] or 0.0, default=None)
    p = load_problem(problem)
    peak = plausibility.peak_gflops_per_core()
    roof, limiter = plausibility.roofline(
        p, n, threads, peak, plausibility.bandwidth_gbs(threads), plausibility.cache_bytes(threads)
    )
    naive = statistics.median([r[NAIVE] for r in measured if r.get(NAIVE)] or [0.0]) or None
    return {
        "problem": problem,
        "mode": mode,
        "threads": threads,
        "n": n,
        "working_set_bytes": p.working_set(n),
        "unit": p.unit,
        "scan": scan,
        "best_example": _short(best_example) if best_example else None,
        "best_sweep": best_sweep,
        "best_kernel": best,
        "rounds": measured,
        "naive_rate": naive,
        "ceiling": median,
        "ceiling_lowest": lowest,
        "below_threshold": median is None or median < THRESHOLD,
        "roofline": roof,
        "roofline_limiter": limiter,
        "roofline_over_naive": roof / naive if naive else None,
    }


def _short(name: str) -> str:
    """An example's file name, or a sweep kernel's name as the scan records it."""
    return name.split(":", 1)[1] if name.startswith("example:") else name


def _fmt(value: float | None) -> str:
    return f"{value:.3g}" if value else "failed"


def run(
    problems: list[str],
    modes: list[str],
    sizes: list[str],
    threads: int,
    rounds: int,
    out: Path,
    evaluate: Evaluate = _evaluate,
    log=print,
) -> dict:
    """Measure every (problem, mode, size) not yet in `out` for this machine class, writing the
    report after each; returns it."""
    old = _previous(out)
    kept = {(e["problem"], e["mode"], e["size"], e["n"]): e for e in old.get("entries", [])}
    report = {
        "machine": machine_summary(),
        "machine_class": machine_class(),
        "threads": threads,
        "rounds": rounds,
        "threshold": THRESHOLD,
        "peak_gflops_per_core": plausibility.peak_gflops_per_core(),
        "bandwidth_gbs": {f"t{t}": plausibility.bandwidth_gbs(t) for t in sorted({1, threads})},
        "cache_bytes": {f"t{t}": plausibility.cache_bytes(t) for t in sorted({1, threads})},
        "entries": [],
        "provenance": report_provenance(),
    }
    for problem in problems:
        for mode in modes:
            mode_threads = MeasureConfig(threads=threads).for_mode(mode).threads
            for size in sizes:
                n = size_for(problem, mode, size, mode_threads)
                if n is None or (size != "timed" and n == load_problem(problem).timed_n(mode)):
                    log(f"{problem} {mode} {size}: {'the timed size' if n else 'no size'} fits the cache; skipped")
                    continue
                found = kept.get((problem, mode, size, n))
                if found is None or (found["rounds_asked"], found["threads"]) != (rounds, mode_threads):
                    found = {
                        "size": size,
                        **entry(problem, mode, n, threads, rounds, evaluate, log),
                        "rounds_asked": rounds,
                    }
                report["entries"].append(found)
                write_json(out, {**report, "finished": False})
    write_json(out, {**report, "finished": True})
    return report


def _previous(out: Path) -> dict:
    """The report at `out` if it was measured on this machine class, else {}."""
    try:
        old = json.loads(out.read_text())
    except (OSError, ValueError):
        return {}
    return old if old.get("machine_class") == machine_class() else {}


def table(report: dict) -> str:
    """The ceilings as a text table: one row per entry and size."""
    lines = [
        f"{'problem':11s} {'mode':7s} {'size':6s} {'n':>9s} {'naive':>8s} {'ceiling':>16s} {'roofline':>14s}  best"
    ]
    for e in report["entries"]:
        ceil = f"{e['ceiling']:.2f} (low {e['ceiling_lowest']:.2f})" if e["ceiling"] else "-"
        roof = f"{e['roofline_over_naive']:.1f} {e['roofline_limiter']}" if e["roofline_over_naive"] else "-"
        flag = " <1.5" if e["below_threshold"] else ""
        best = e.get("best_kernel") or "-"
        lines.append(
            f"{e['problem']:11s} {e['mode']:7s} {e['size']:6s} {e['n']:9d} {_fmt(e['naive_rate']):>8s} "
            f"{ceil:>16s} {roof:>14s}  {best}{flag}"
        )
    return "\n".join(lines)


def _csv(value: str, known: tuple[str, ...] | list[str], what: str, numbers: bool = False) -> list[str]:
    items = [v for v in value.split(",") if v]
    unknown = [v for v in items if v not in known and not (numbers and v.isdigit() and int(v) > 0)]
    if unknown or not items:
        raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(unknown) or '(none)'}; known: {', '.join(known)}")
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", action="append", help="a problem (repeatable; default: every problem)")
    parser.add_argument("--modes", type=lambda v: _csv(v, MODES, "mode"), default=list(MODES))
    parser.add_argument(
        "--sizes",
        type=lambda v: _csv(v, SIZES, "size", numbers=True),
        default=list(SIZES),
        help="timed, cache and/or sizes n to try (comma-separated)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds of naive.c and the two best")
    parser.add_argument("--threads", type=int, default=2, help="threads of the OpenMP entries")
    parser.add_argument("--out", default="results/suite/headroom.json")
    args = parser.parse_args(argv)
    known = list_problems()
    problems = args.problem or known
    unknown = [p for p in problems if p not in known]
    if unknown:
        parser.error(f"unknown problem {', '.join(unknown)}; known: {', '.join(known)}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    out = machine_path(args.out)  # this machine's results folder (lab.results)
    report = run(problems, args.modes, args.sizes, args.threads, args.rounds, out)
    print(table(report))
    figure = plots.headroom(report, out.parent / "figures")
    print(f"wrote {out}" + (f" and {figure}" if figure else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
