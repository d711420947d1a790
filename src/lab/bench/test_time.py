"""How long `make test` takes on this machine: one run, timed, recorded with machine and date.

    python -m lab.bench.test_time --out results/test_time.json     # make test-time

Runs `make test` (lint, the layers contract and the whole test suite) in the repository as
CI does, and writes its wall time, exit status and pytest's summary line beside the machine
and provenance every result records. The README's expected time for `make test` is this
file's figure; a machine without one has no figure to quote.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import time
from pathlib import Path

from lab import paths
from lab.files import write_json
from lab.harness.machine import machine_summary
from lab.results import machine_path, report_provenance


def time_make_test(root: Path) -> dict:
    """Run `make test` in `root` and return its wall time, status and pytest's last line."""
    start = time.perf_counter()
    done = subprocess.run(["make", "test"], cwd=root, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    summary = next(
        (line.strip("= ") for line in reversed(done.stdout.splitlines()) if re.search(r"\d+ passed|failed", line)),
        None,
    )
    failed = sorted({line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")})
    log = root / "runs" / "make_test.log"  # the whole output, to read what failed
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(done.stdout + done.stderr)
    return {"wall_s": round(wall, 1), "returncode": done.returncode, "pytest": summary, "failed": failed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="results/test_time.json")
    args = parser.parse_args(argv)
    args.out = str(machine_path(args.out))  # this machine's results folder (lab.results)
    root = paths.repo_root()
    if root is None:
        parser.error("make test runs in a checkout; this lab is an installed package")
    result = time_make_test(root)
    write_json(args.out, {**result, "machine": machine_summary(), "provenance": report_provenance()})
    print(f"make test: {result['wall_s'] / 60:.1f} min, exit {result['returncode']}: {result['pytest']} -> {args.out}")
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
