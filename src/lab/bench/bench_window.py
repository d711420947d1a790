"""Attacks on the timed window against their honest twins: which ones inflate their figure.

    python -m lab.bench.bench_window [--rounds 3] [--only GLOB] [--out results/timed_window.json]

The kernels are the files of tests/kernels/hostile whose name holds `window_` and whose first
line names a `twin:`, the honest kernel (tests/kernels/legit or harness/*/examples) whose loop
the attack reuses verbatim: the two do the same work, so their GFLOPS compare directly. The
attacks move part of a call's work out of the timed window (`<problem>_window_<mechanism>_
<mode>_<left>.c`: a bump-go phantom call or an impersonator of the runner's loop, leaving
none, 1/8 or 1/4 of the work to the timed call; see tests/kernels/README.md), or try another
way out of it (`window_<what>.c`, `<problem>_window_<what>.c`).

Each kernel and its twin are scored at the problem's default size, in the mode and with the
threads the attack's header gives, with the cache off, in R rounds; a round scores the pair
back to back, the attack first in even rounds and the twin first in odd ones, so both see the
same machine load. Per kernel: every round's status (with the detail of a failure) and GFLOPS
of both, their ratio (attack / twin, where both are `ok`), the median ratio, and `inflated`:
some round scored the attack `ok` at more than INFLATED times its twin. Prints a table and
writes the rounds, the summaries, the tree's git revision and the machine as JSON.

Everything here times kernels: run it alone on the machine (under the lab's timing lock).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import re
import statistics
import subprocess
from pathlib import Path

from lab import paths
from lab.config import MeasureConfig
from lab.files import write_json
from lab.harness.evaluate import EvalResult, evaluate
from lab.harness.machine import machine_summary
from lab.results import machine_path, report_provenance

#: An attack scored `ok` at more than this multiple of its twin's GFLOPS has inflated its figure
#: (the same work, so an honest difference is noise: a few percent).
INFLATED = 1.5
#: How many characters of a failure's detail a round keeps.
DETAIL_CHARS = 160
#: `<problem>_window_<mechanism>_<mode>_<left>.c`: the timed-window attacks proper.
_NAME = re.compile(
    r"^(?P<problem>\w+?)_window_(?P<mechanism>bump_go|impersonate)_(?P<mode>serial|openmp)_(?P<left>none|eighth|quarter)\.c$"
)
_FIELD = re.compile(r"\b(expect|problem|mode|threads|twin):\s*(\S+)")


@dataclasses.dataclass(frozen=True)
class WindowKernel:
    """An attack on the timed window, as its file name and first line describe it."""

    path: Path
    expect: str
    problem: str
    mode: str
    threads: int
    twin: str | None  # the honest twin, relative to the checkout; None: nothing to compare with
    root: Path  # the checkout
    mechanism: str | None  # bump_go or impersonate (None: another idea)
    left: str | None  # none, eighth or quarter: the share of the work left in the timed call

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def twin_path(self) -> Path | None:
        return self.root / self.twin if self.twin else None

    def config(self) -> MeasureConfig:
        """How it is measured: the problem's default sizes, its header's mode and threads."""
        return MeasureConfig(mode=self.mode, threads=self.threads)


def parse_kernel(path: Path, root: Path) -> WindowKernel:
    """The header fields of a window kernel (`twin:` is a path relative to `root`, the checkout)."""
    fields = dict(_FIELD.findall(path.read_text().splitlines()[0]))
    if "expect" not in fields:
        raise ValueError(f"{path.name}: first line must say 'expect: STATUS'")
    named = _NAME.match(path.name)
    mode = fields.get("mode", "openmp")
    return WindowKernel(
        path=path,
        expect=fields["expect"],
        problem=fields.get("problem", "dgemm"),
        mode=mode,
        threads=int(fields.get("threads", 1)),
        twin=fields.get("twin"),
        root=root,
        mechanism=named and named.group("mechanism"),
        left=named and named.group("left"),
    )


def window_kernels(root: Path | None = None) -> list[WindowKernel]:
    """Every window kernel of `root`'s tests/kernels/hostile (default: this checkout), sorted by name."""
    root = root or paths.repo_root()
    if root is None:
        raise SystemExit("bench-window scores the kernels of a source checkout (tests/kernels); run it from one")
    files = sorted((root / "tests" / "kernels" / "hostile").glob("*window_*.c"))
    return [parse_kernel(f, root) for f in files]


def ratio(attack: dict, twin: dict) -> float | None:
    """Attack GFLOPS over twin GFLOPS, where both scored `ok` (else None)."""
    if attack["status"] != "ok" or twin["status"] != "ok" or not twin["gflops"]:
        return None
    return attack["gflops"] / twin["gflops"]


def summarize(rounds: list[dict]) -> dict:
    """The median ratio over the rounds that have one, and whether some `ok` round exceeded INFLATED."""
    ratios = [r["ratio"] for r in rounds if r["ratio"] is not None]
    return {
        "attack_statuses": [r["attack"]["status"] for r in rounds],
        "twin_statuses": [r["twin"]["status"] for r in rounds],
        "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
        "inflated": any(
            r["attack"]["status"] == "ok" and r["ratio"] is not None and r["ratio"] > INFLATED for r in rounds
        ),
    }


def _entry(result: EvalResult) -> dict:
    out = {"status": result.status, "gflops": round(result.gflops, 4) if result.gflops is not None else None}
    if result.status != "ok":
        out["detail"] = result.detail[:DETAIL_CHARS]
    return out


def _score(path: Path, kernel: WindowKernel) -> dict:
    return _entry(evaluate(path.read_text(), kernel.problem, kernel.config(), cache=False))


def run(kernels: list[WindowKernel], rounds: int, done=None) -> list[dict]:
    """Score every kernel that has a twin against it, `rounds` times, alternating which goes first;
    `done(results so far)` is called after each kernel (the caller saves them: nothing is lost if
    a long run dies)."""
    out = []
    for k in kernels:
        if k.twin is None:
            continue
        measured = []
        for r in range(rounds):
            if r % 2 == 0:
                attack, twin = _score(k.path, k), _score(k.twin_path, k)
            else:
                twin, attack = _score(k.twin_path, k), _score(k.path, k)
            entry = {"attack": attack, "twin": twin}
            entry["ratio"] = ratio(attack, twin)
            if entry["ratio"] is not None:
                entry["ratio"] = round(entry["ratio"], 3)
            measured.append(entry)
            print(f"round {r + 1}/{rounds} {k.name}: {_line(entry)}", flush=True)
        out.append(
            {
                "kernel": k.name,
                "problem": k.problem,
                "mode": k.mode,
                "threads": k.threads,
                "mechanism": k.mechanism,
                "left": k.left,
                "expect": k.expect,
                "twin": k.twin,
                "rounds": measured,
                **summarize(measured),
            }
        )
        if done:
            done(out)
    return out


def _line(entry: dict) -> str:
    def side(x: dict) -> str:
        return f"{x['gflops']:.3g}" if x["status"] == "ok" else x["status"]

    r = entry["ratio"]
    return f"attack {side(entry['attack'])}, twin {side(entry['twin'])}" + (f", ratio {r:.2f}" if r is not None else "")


def _revision(root: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


def table(results: list[dict]) -> str:
    """One line per kernel: its statuses, median GFLOPS of attack and twin, median ratio, the flag."""
    lines = [f"{'kernel':52s} {'status':12s} {'attack':>9s} {'twin':>9s} {'ratio':>8s}  inflated"]
    for k in results:
        ok_attack = [r["attack"]["gflops"] for r in k["rounds"] if r["attack"]["status"] == "ok"]
        ok_twin = [r["twin"]["gflops"] for r in k["rounds"] if r["twin"]["status"] == "ok"]
        a = f"{statistics.median(ok_attack):9.3g}" if ok_attack else f"{'-':>9s}"
        t = f"{statistics.median(ok_twin):9.3g}" if ok_twin else f"{'-':>9s}"
        ratio_text = f"{k['median_ratio']:8.2f}" if k["median_ratio"] is not None else f"{'-':>8s}"
        status = "/".join(sorted(set(k["attack_statuses"])))
        lines.append(f"{k['kernel']:52s} {status:12s} {a} {t} {ratio_text}  {'yes' if k['inflated'] else 'no'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of each attack and its twin")
    parser.add_argument("--only", metavar="GLOB", help="only the kernels whose file name matches")
    parser.add_argument("--out", default="results/timed_window.json")
    args = parser.parse_args(argv)
    args.out = str(machine_path(args.out))  # this machine's results folder (lab.results)

    root = paths.repo_root()
    kernels = window_kernels(root)
    if args.only:
        kernels = [k for k in kernels if fnmatch.fnmatch(k.name, args.only)]
    head = {
        "machine": machine_summary(),
        "revision": _revision(root),
        "rounds": args.rounds,
        "inflated_above": INFLATED,
    }

    def save(results: list[dict], finished: bool = False) -> None:
        inflated = [k["kernel"] for k in results if k["inflated"]]
        write_json(
            args.out,
            {**head, "provenance": report_provenance(), "finished": finished, "kernels": results, "inflated": inflated},
        )

    results = run(kernels, args.rounds, save)
    print(table(results))
    save(results, finished=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
