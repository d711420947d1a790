"""Which numerics settings give the seed policy the same weights on every x86-64 machine, and
what each costs: the smoke policy built under each, timed, its weights' sha256 recorded.

    python -m lab.bench.seed_numerics --out results/seed_numerics.json     # make seed-numerics

PyTorch's CPU kernels round differently per instruction set, so one seed gives other weights on
a CPU without AVX-512. Another machine cannot be borrowed here, so it is simulated: each setting
is built twice, once as this CPU runs it and once with MKL restricted to AVX2
(`MKL_ENABLE_INSTRUCTIONS=AVX2`, what MKL does on a CPU without AVX-512); ATen's dispatch is
pinned by the settings themselves. A setting is portable when both builds give the same sha256.
Builds run one after another in their own processes (the settings are read as PyTorch loads).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lab.files import write_json
from lab.harness.machine import machine_summary
from lab.policy.seed_policy.pretrain import DETERMINISTIC_ENV, NUMERICS_ENV
from lab.provenance import policy_sha256
from lab.results import machine_path, report_provenance

#: The settings compared: PyTorch's own choice, ATen pinned alone, the lab's set
#: (lab.policy.seed_policy.pretrain.DETERMINISTIC_ENV: MKL's AVX2 branch, which MKL keeps on Intel
#: CPUs only) and the same with MKL's COMPATIBLE branch, which it keeps on every CPU.
SETTINGS = {
    "none": {},
    "aten_avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "chosen": DETERMINISTIC_ENV,
    "mkl_compatible": {**DETERMINISTIC_ENV, "MKL_CBWR": "COMPATIBLE,STRICT"},
}
#: What a CPU without AVX-512 changes in MKL's dispatch.
WITHOUT_AVX512 = {"MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def build(env: dict[str, str], out: Path) -> dict:
    """Build the smoke policy into `out` with exactly `env` added (no pinning of the builder's own)."""
    # The builder pins the numerics where nothing is set; here it takes them as given.
    full = {k: v for k, v in os.environ.items() if k not in DETERMINISTIC_ENV} | env | {NUMERICS_ENV: "as-given"}
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "lab.cli", "seed-model", "--preset", "smoke", "--out", str(out), "--force"],
        env=full,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"smoke build failed under {env}: {run.stderr.strip()[-300:]}")
    return {"build_s": round(wall, 1), "sha256": policy_sha256(out)}


def compare(settings: dict[str, dict[str, str]] = SETTINGS) -> dict:
    """Each setting built as this CPU runs it and as one without AVX-512: time, sha256, portable."""
    rows = {}
    with tempfile.TemporaryDirectory(prefix="lab-seed-numerics-") as tmp:
        for name, env in settings.items():
            here = build(env, Path(tmp) / f"{name}-here")
            other = build({**env, **WITHOUT_AVX512}, Path(tmp) / f"{name}-avx2")
            rows[name] = {
                "env": env,
                "this_cpu": here,
                "without_avx512": other,
                "same_weights": here["sha256"] == other["sha256"],
            }
            print(
                f"{name}: {here['build_s']} s, same weights without AVX-512: {rows[name]['same_weights']}", flush=True
            )
    base = rows.get("none", {}).get("this_cpu", {}).get("build_s")
    for row in rows.values():
        row["build_cost"] = round(row["this_cpu"]["build_s"] / base, 2) if base else None
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/seed_numerics.json")
    args = parser.parse_args(argv)
    report = {"preset": "smoke", "settings": compare(), "machine": machine_summary(), "provenance": report_provenance()}
    out = machine_path(args.out)
    write_json(out, report)
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
