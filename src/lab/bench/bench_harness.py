"""`make bench-harness`: throughput, parallel efficiency, cache cost, timing stability, the
handshake's cost, and (with --against) the same harness before and after a change.

    python -m lab.bench.bench_harness [--completions 64] [--repeats 10] [--against REF] [--out FILE]

1. Scores a batch of completions (the legitimate kernels of tests/kernels/legit and
   harness/dgemm/examples, made distinct by a comment, plus a share of exact
   duplicates) with a cold cache: candidates/s, per-candidate wall time, and
   efficiency = (sum of fresh compile+run time / cores) / wall. What happens once per
   machine (building the drivers, the peak and baseline calibrations) is done first, by
   one warm-up evaluation outside the clock, and reported as `warmup_s`.
2. Scores every duplicate again (a cache hit): its cost relative to a fresh evaluation.
3. Scores one kernel `repeats` times with the cache off: the coefficient of variation of
   its GFLOPS, and the median handshake between measurer and runner per timed call.
4. With `--against REF` (a git revision), runs the batch and a table of every example
   kernel's GFLOPS (OpenMP kernels at 1 and 2 threads) in a worktree of REF and in this
   tree, alternating rounds in one run, so both see the same machine load: the
   before/after comparison of a harness change. That batch is built from REF's own
   legitimate kernels, so both sides score the same work.
Prints tables and writes the numbers (with the machine) as JSON.

Why the probes are code strings run in a subprocess: the other tree's `lab` package must
be imported from that tree, in a process of its own; only the public `evaluate` and
`evaluate_batch` API, unchanged across versions, is used there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab import paths
from lab.config import MeasureConfig
from lab.files import write_json
from lab.harness.evaluate import evaluate, evaluate_batch
from lab.harness.machine import machine_summary
from lab.results import machine_path, report_provenance

#: Each probe prints one JSON line. argv: [corpus file (JSON list of texts) or kernels dir, repeats].
_BATCH_PROBE = r"""
import json, os, sys, time
from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate_batch
from lab.harness.evaluate import evaluate
batch = json.load(open(sys.argv[1]))
# Once per machine and tree, outside the clock: the drivers' build and the calibrations.
t0 = time.monotonic()
evaluate(batch[0] + "\n/* warm-up */\n", "dgemm", MeasureConfig(), cache=False)
warmup = time.monotonic() - t0
t0 = time.monotonic()
results = evaluate_batch(batch, "dgemm", MeasureConfig(), progress=False)
wall = time.monotonic() - t0
fresh = [r for r in results if not r.cached]
busy = sum(r.compile_s + r.run_s for r in fresh)
print(json.dumps({"wall_s": wall, "busy_s": busy, "fresh": len(fresh), "cores": len(os.sched_getaffinity(0)),
                  "warmup_s": warmup, "statuses": sorted({r.status for r in results})}))
"""
_TABLE_PROBE = r"""
import json, sys
from pathlib import Path
from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate
out = {}
for path in sorted(Path(sys.argv[1]).glob("*/examples/*")):
    # OpenMP kernels at 1 and 2 threads (the second exercises the team's wake-up per call).
    for threads in (1, 2) if "omp" in path.name else (1,):
        r = evaluate(path.read_text(), path.parent.parent.name, MeasureConfig(threads=threads), cache=False)
        key = f"{path.parent.parent.name}/{path.name}" + (f" T={threads}" if threads > 1 else "")
        out[key] = r.gflops if r.status == "ok" else f"{r.status}: {r.detail[:100]}"
print(json.dumps(out))
"""


def _corpus(root: Path | None = None) -> list[str]:
    """The DGEMM kernels of tests/kernels/legit and harness/dgemm/examples in the tree `root`."""
    root = root or paths.repo_root()
    if root is None:
        raise SystemExit("bench-harness scores the kernels of a source checkout (tests/kernels); run it from one")
    files = sorted((root / "tests" / "kernels" / "legit").glob("*")) + sorted(
        (root / "harness" / "dgemm" / "examples").glob("*")
    )
    texts = []
    for f in files:
        first = f.read_text().splitlines()[0]
        problem = re.search(r"problem:\s*(\w+)", first)
        if (problem is None or problem.group(1) == "dgemm") and f.suffix in (".c", ".md"):
            texts.append(f.read_text())
    return texts


def _batch(n: int, duplicates: float, root: Path | None = None) -> tuple[list[str], int]:
    rng = random.Random(0)
    corpus = _corpus(root)
    n_dup = int(round(n * duplicates))
    unique = [f"{corpus[i % len(corpus)]}\n/* variant {i} */\n" for i in range(n - n_dup)]
    batch = unique + [rng.choice(unique) for _ in range(n_dup)]
    rng.shuffle(batch)
    return batch, n_dup


def _probe(tree: Path, code: str, *args: str) -> dict:
    """Run a probe with `tree`'s lab package and a cold private cache (the CPU locks stay the
    machine's: the probes are timed)."""
    with tempfile.TemporaryDirectory(prefix="lab-bench-") as cache:
        env = {**os.environ, "PYTHONPATH": str(tree / "src"), "LAB_CACHE_DIR": cache}
        out = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=False, cwd=tree
        )
    if out.returncode != 0:
        raise SystemExit(f"probe in {tree} failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(ref: str, rounds: int, completions: int, duplicates: float) -> dict:
    """The batch and the kernel table in a worktree of `ref` ("before") and here ("after"), alternating."""
    here = paths.repo_root()
    with tempfile.TemporaryDirectory(prefix="lab-before-") as tmp:
        before_tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(before_tree), ref], cwd=here, check=True, capture_output=True
        )
        try:
            # The batch comes from the *before* tree's legitimate kernels: kernels added since
            # (some of which the old harness refused without running them) would make the two
            # sides do different work.
            batch, _ = _batch(completions, duplicates, before_tree)
            batch_file = Path(tmp) / "batch.json"
            batch_file.write_text(json.dumps(batch))
            runs: dict[str, dict[str, list]] = {
                "before": {"batch": [], "table": []},
                "after": {"batch": [], "table": []},
            }
            for r in range(rounds):
                order = [("before", before_tree), ("after", here)]
                for label, tree in order if r % 2 == 0 else order[::-1]:
                    print(f"round {r + 1}/{rounds}: {label}", flush=True)
                    runs[label]["batch"].append(_probe(tree, _BATCH_PROBE, str(batch_file)))
                    # Both sides score the *before* tree's examples: the same texts, and no
                    # problem only one side knows.
                    runs[label]["table"].append(_probe(tree, _TABLE_PROBE, str(before_tree / "harness")))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before_tree)], cwd=here, check=False)

    def batch_stats(label: str) -> dict:
        b = runs[label]["batch"]
        walls = [x["wall_s"] for x in b]
        eff = [x["busy_s"] / x["cores"] / x["wall_s"] for x in b]
        return {
            "per_candidate_s": [round(w / len(batch), 4) for w in walls],
            "per_candidate_s_median": round(statistics.median(walls) / len(batch), 4),
            "efficiency": [round(e, 3) for e in eff],
            "efficiency_median": round(statistics.median(eff), 3),
            "statuses": sorted({s for x in b for s in x["statuses"]}),
            "warmup_s": [round(x["warmup_s"], 2) for x in b],
        }

    kernels = []
    for name in runs["after"]["table"][0]:
        before = [t.get(name) for t in runs["before"]["table"]]
        after = [t.get(name) for t in runs["after"]["table"]]
        if not all(isinstance(x, float) for x in before + after):
            kernels.append({"kernel": name, "before": before, "after": after, "change": None})
            continue
        b, a = statistics.median(before), statistics.median(after)
        kernels.append(
            {
                "kernel": name,
                "before_gflops": round(b, 2),
                "after_gflops": round(a, 2),
                "change": round(a / b - 1, 4),
                "before_runs": [round(x, 2) for x in before],
                "after_runs": [round(x, 2) for x in after],
            }
        )
    before, after = batch_stats("before"), batch_stats("after")
    return {
        "ref": subprocess.run(
            ["git", "rev-parse", "--short", ref], cwd=here, capture_output=True, text=True
        ).stdout.strip(),
        "rounds": rounds,
        "completions": len(batch),
        "before": before,
        "after": after,
        "per_candidate_change": round(after["per_candidate_s_median"] / before["per_candidate_s_median"] - 1, 4),
        "kernels": kernels,
        "targets": {"efficiency": ">= 0.95", "per_candidate_change": "<= +10%", "kernel change": "within 3%"},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=64)
    parser.add_argument("--duplicates", type=float, default=0.25, help="share of exact duplicates in the batch")
    parser.add_argument("--repeats", type=int, default=10, help="scorings of one kernel for the CV")
    parser.add_argument("--against", metavar="REF", help="also compare with the harness of this git revision")
    parser.add_argument("--rounds", type=int, default=3, help="alternating before/after rounds with --against")
    parser.add_argument("--out", default="results/bench_harness.json")
    args = parser.parse_args(argv)
    args.out = str(machine_path(args.out))  # this machine's results folder (lab.results)

    # A cold, private cache: every unique completion is measured for real.
    os.environ["LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="lab-bench-cache-")
    batch, n_dup = _batch(args.completions, args.duplicates)
    unique = list(dict.fromkeys(batch))
    cores = len(os.sched_getaffinity(0))
    config = MeasureConfig()

    # Once per machine, outside the clock: the drivers' build and the calibrations.
    t0 = time.monotonic()
    evaluate(batch[0] + "\n/* warm-up */\n", "dgemm", config, cache=False)
    warmup = time.monotonic() - t0
    t0 = time.monotonic()
    results = evaluate_batch(batch, "dgemm", config)
    wall = time.monotonic() - t0
    fresh = [r for r in results if not r.cached]
    busy = sum(r.compile_s + r.run_s for r in fresh)
    efficiency = busy / cores / wall
    statuses = {s: sum(r.status == s for r in results) for s in {r.status for r in results}}

    dup_texts = [t for t in batch if batch.count(t) > 1][:n_dup] or unique[:n_dup]
    t0 = time.monotonic()
    for text in dup_texts:
        assert evaluate(text, "dgemm", config).cached
    cached_cost = (time.monotonic() - t0) / max(1, len(dup_texts))
    fresh_cost = busy / max(1, len(fresh))

    repeat_path = paths.harness_dir() / "dgemm" / "examples" / "packed_avx512_omp.c"
    kernel = repeat_path.read_text()
    gflops, handshakes = [], []
    for _ in range(args.repeats):
        r = evaluate(kernel, "dgemm", config, cache=False)
        gflops.append(r.gflops if r.status == "ok" else float("nan"))
        if r.handshake_s is not None:
            handshakes.append(r.handshake_s)
    cv = statistics.pstdev(gflops) / statistics.mean(gflops)
    handshake_us = statistics.median(handshakes) * 1e6

    report = {
        "machine": machine_summary(),
        "config": {"n": config.n, "threads": config.threads, "min_time_s": config.min_time_s},
        "completions": len(batch),
        "unique": len(unique),
        "duplicates": n_dup,
        "statuses": statuses,
        "warmup_s": round(warmup, 2),
        "wall_s": round(wall, 2),
        "candidates_per_s": round(len(batch) / wall, 2),
        "per_candidate_s": round(wall / len(batch), 4),
        "fresh_compile_plus_run_s": round(busy, 2),
        "efficiency": round(efficiency, 3),
        "fresh_eval_s": round(fresh_cost, 3),
        "cached_eval_s": round(cached_cost, 5),
        "cached_over_fresh": round(cached_cost / fresh_cost, 4),
        "repeat_kernel": repeat_path.name,
        "repeat_gflops": [round(g, 2) for g in gflops],
        "gflops_cv": round(cv, 4),
        "handshake_overhead_us": round(handshake_us, 2),
        "handshake_overhead_us_runs": [round(h * 1e6, 2) for h in handshakes],
        "targets": {"efficiency": ">= 0.95", "cached_over_fresh": "< 0.02", "gflops_cv": "<= 0.05"},
    }
    print(f"{'completions':28s} {len(batch)} ({len(unique)} unique, {n_dup} duplicates) on {cores} cores")
    print(f"{'statuses':28s} {statuses}")
    print(f"{'wall time':28s} {wall:.1f} s ({wall / len(batch) * 1e3:.0f} ms per candidate)")
    print(f"{'efficiency':28s} {efficiency:.3f}   (target >= 0.95)")
    print(
        f"{'cached / fresh evaluation':28s} {cached_cost * 1e3:.1f} ms / {fresh_cost * 1e3:.0f} ms = "
        f"{cached_cost / fresh_cost:.2%}   (target < 2%)"
    )
    print(
        f"{'GFLOPS CV over ' + str(args.repeats) + ' runs':28s} {cv:.2%}   (target <= 5%)  "
        f"median {statistics.median(gflops):.1f} GFLOPS"
    )
    print(f"{'handshake per timed call':28s} {handshake_us:.1f} us (median; subtracted from each call's time)")
    if args.against:
        cmp = compare(args.against, args.rounds, args.completions, args.duplicates)
        report["before_after"] = cmp
        b, a = cmp["before"], cmp["after"]
        print(f"\nbefore ({cmp['ref']}) vs after, {cmp['rounds']} alternating rounds, medians:")
        print(f"{'efficiency':28s} {b['efficiency_median']:.3f} -> {a['efficiency_median']:.3f}")
        print(
            f"{'per-candidate wall':28s} {b['per_candidate_s_median'] * 1e3:.0f} ms -> "
            f"{a['per_candidate_s_median'] * 1e3:.0f} ms ({cmp['per_candidate_change']:+.1%})"
        )
        print(f"{'kernel':40s} {'before':>9s} {'after':>9s} {'change':>8s}")
        for k in cmp["kernels"]:
            if k["change"] is None:
                print(f"{k['kernel']:40s} failed: before {k['before']} after {k['after']}")
            else:
                print(f"{k['kernel']:40s} {k['before_gflops']:9.2f} {k['after_gflops']:9.2f} {k['change']:+8.1%}")
    write_json(args.out, {**report, "provenance": report_provenance()})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
