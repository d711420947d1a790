"""`make bench-cluster`: what measuring through a Dask cluster costs, against this machine's pool.

    python -m lab.bench.bench_cluster [--completions 64] [--rounds 5] [--out results/bench_cluster.json]

Scores one batch of distinct legitimate DGEMM kernels (bench_harness's batch, without
duplicates) with the cache off, in alternating rounds, so both sides see the same machine load:

- local: this machine's core slots, through joblib (what `compute.backend: local` does);
- cluster: a loopback cluster of two Dask workers of one thread each (distributed's
  LocalCluster: a scheduler and two worker processes on 127.0.0.1), through
  lab.harness.cluster (what `compute.backend: dask` does).

Both sides hold the same CPU slots of one machine, so the cluster cannot be faster here: the
figure is its overhead per candidate (scheduling, shipping the task and the result). Each
side first scores a warm-up batch outside the clock (the drivers' build, the calibrations,
the workers' imports). Reports candidates/s and wall time per round with medians and spread,
the overhead per candidate, and how far the two sides' GFLOPS for the same kernel agree.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from lab.analysis.compare import table_text
from lab.bench.bench_harness import _batch
from lab.config import ComputeConfig, MeasureConfig
from lab.files import write_json
from lab.harness.evaluate import evaluate_batch
from lab.harness.machine import machine_summary
from lab.results import machine_path, report_provenance

MEASURE = MeasureConfig()  # OpenMP permitted, 1 thread: every kernel of the batch is ok


def _round(batch: list[str], compute: ComputeConfig | None) -> tuple[float, list]:
    start = time.monotonic()
    results = evaluate_batch(batch, "dgemm", MEASURE, cache=False, progress=False, compute=compute)
    return time.monotonic() - start, results


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def bench(completions: int, rounds: int) -> dict:
    from distributed import LocalCluster

    batch, _ = _batch(completions, 0.0)
    warmup = [f"{text}\n/* warm-up */\n" for text in batch[:4]]
    walls: dict[str, list[float]] = {"local": [], "cluster": []}
    gflops: dict[str, dict[int, list[float]]] = {"local": {}, "cluster": {}}
    statuses: dict[str, set] = {"local": set(), "cluster": set()}
    workers: set[str] = set()
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        compute = ComputeConfig(backend="dask", address=cluster.scheduler_address)
        _round(warmup, None)
        _round(warmup, compute)
        for r in range(rounds):
            # Alternate which side goes first, so a drift in the machine's load favours neither.
            order = [("local", None), ("cluster", compute)]
            for side, how in order if r % 2 == 0 else order[::-1]:
                wall, results = _round(batch, how)
                walls[side].append(wall)
                statuses[side] |= {res.status for res in results}
                for i, res in enumerate(results):
                    if res.status == "ok":
                        gflops[side].setdefault(i, []).append(res.gflops)
                if side == "cluster":
                    workers |= {res.worker for res in results}
                print(
                    f"round {r + 1}/{rounds} {side:7s}: {wall:6.1f} s, {len(batch) / wall:.2f} candidates/s", flush=True
                )
    local, remote = statistics.median(walls["local"]), statistics.median(walls["cluster"])
    per_candidate = [(c - lo) / len(batch) for c, lo in zip(walls["cluster"], walls["local"])]
    agree = [
        statistics.median(gflops["cluster"][i]) / statistics.median(gflops["local"][i])
        for i in gflops["local"]
        if i in gflops["cluster"]
    ]
    return {
        "completions": len(batch),
        "rounds": rounds,
        "measure": dataclasses.asdict(MEASURE),
        "cluster": "2 Dask workers x 1 thread on 127.0.0.1 (LocalCluster), the same machine as local",
        "local_wall_s": _spread(walls["local"]),
        "cluster_wall_s": _spread(walls["cluster"]),
        "local_candidates_per_s": len(batch) / local,
        "cluster_candidates_per_s": len(batch) / remote,
        "overhead_s_per_candidate": _spread(per_candidate),
        "overhead_ratio": remote / local,
        "gflops_cluster_over_local": _spread(agree) if agree else None,
        "statuses": {side: sorted(s) for side, s in statuses.items()},
        "workers": sorted(workers),
        "machine": machine_summary(),
    }


def markdown_table(report: dict) -> str:
    """The README's table of a bench_cluster report: medians, [min, max] over the rounds."""
    n = report["completions"]

    def rate(walls: dict) -> str:
        return f"{n / walls['median']:.2f} [{n / walls['max']:.2f}, {n / walls['min']:.2f}]"

    o, g = report["overhead_s_per_candidate"], report["gflops_cluster_over_local"]
    local, remote = report["local_wall_s"], report["cluster_wall_s"]
    head = [
        f"where ({n} candidates, {report['rounds']} rounds)",
        "candidates/s",
        "wall (s)",
        "overhead per candidate (ms)",
    ]
    rows = [
        [
            f"this machine's pool (joblib, {report['machine']['cores']} slots)",
            rate(local),
            f"{local['median']:.1f}",
            "",
        ],
        [
            "loopback cluster (2 Dask workers)",
            rate(remote),
            f"{remote['median']:.1f}",
            f"{o['median'] * 1e3:.0f} [{o['min'] * 1e3:.0f}, {o['max'] * 1e3:.0f}]",
        ],
    ]
    foot = f"\n\nGFLOPS of the same kernel, cluster / local: {g['median']:.2f} [{g['min']:.2f}, {g['max']:.2f}]."
    return table_text(head, rows) + (foot if g else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--completions", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default="results/bench_cluster.json")
    args = parser.parse_args(argv)
    args.out = str(machine_path(args.out))  # this machine's results folder (lab.results)
    report = bench(args.completions, args.rounds)
    write_json(args.out, {**report, "provenance": report_provenance()})
    print(markdown_table(report))
    o = report["overhead_s_per_candidate"]
    print(
        f"local {report['local_candidates_per_s']:.2f} candidates/s, cluster {report['cluster_candidates_per_s']:.2f}; "
        f"overhead {o['median'] * 1e3:.0f} ms per candidate [{o['min'] * 1e3:.0f}, {o['max'] * 1e3:.0f}] "
        f"over {args.rounds} rounds -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
