"""The seed policy's measures per CPU tier, as the markdown table docs/seed_policy.md shows.

    markdown_table(["results/machines/<class>", "results/machines/<class>-avx2"])

One column per results folder of a machine class (the host's own tier, and a lower one forced
with `LAB_TARGET`), read from its seed report (`seed_policy.json`, `lab seed-report`) and its
autotuning run (`autotune.json`, `lab autotune`); each row holds the report's own target and
marks a missed one. The document pastes the table as it is, and tests/test_readme.py holds
the copy equal to the committed JSON, as it does for every results table.
"""

from __future__ import annotations

import operator
import re
from pathlib import Path

from lab.analysis.compare import table_text
from lab.files import read_json

#: The classical baseline's bar (no report states it): the autotuner's best kernel at 0.9x
#: OpenBLAS of the same tier and thread count.
AUTOTUNE_TARGET = ">= 0.9"

_SIMD = {"avx512": "AVX-512", "avx2": "AVX2", "sse4": "SSE4.2", "neon": "NEON"}
_OPS = {">=": (operator.ge, "≥"), "<=": (operator.le, "≤"), "<": (operator.lt, "<"), ">": (operator.gt, ">")}


def _bound(target: str) -> tuple[str, float]:
    """A report's target such as '>= 0.05' as (operator, value)."""
    found = re.fullmatch(r"\s*(>=|<=|<|>)\s*([0-9.]+)\s*", target)
    if not found:
        raise ValueError(f"unreadable target {target!r}: expected an operator and a number, as '>= 0.3'")
    return found[1], float(found[2])


def _met(value: float, target: str) -> bool:
    op, bound = _bound(target)
    return _OPS[op][0](value, bound)


def _target_text(target: str, percent: bool = False, unit: str = "") -> str:
    op, bound = _bound(target)
    shown = f"{bound:.0%}" if percent else f"{bound:g}{unit}"
    return f"{_OPS[op][1]} {shown}"


def _missed(text: str, value: float | None, target: str) -> str:
    return text if value is not None and _met(value, target) else f"{text}, **missed**"


def _autotune_cell(tune: dict | None) -> str:
    if not tune or not tune.get("best"):
        return "—"
    best, blas = tune["best"], tune["openblas_gflops"]
    if best.get("family") == "microkernel" and best.get("regblock"):
        simd = _SIMD.get(best.get("simd"), best.get("simd"))
        what = f"{simd} {best['regblock'][0]}×{best['regblock'][1]} micro-kernel"
    else:
        what = best.get("family", "?")
    ratio = best["gflops"] / blas
    return _missed(f"{best['gflops']:.1f} / {blas:.1f} = {ratio:.2f} ({what})", ratio, AUTOTUNE_TARGET)


def _columns(report: dict, tune: dict | None, same_policy: bool) -> list[str]:
    """One tier's cells, row by row (`same_policy`: the first column's policy, whose build time
    the build row then does not repeat)."""
    held, targets = report["held_out"], report["targets"]
    num = held["samples"]
    counts = held["status_counts"]
    causes = held.get("format_error_causes", {})
    other, garbled = causes.get("another problem's function", 0), causes.get("garbled or partial", 0)
    micro = held["microkernel"]
    attempts, ok = micro["attempts"], micro["ok"]
    if attempts and ok:
        micro_ok = f"{ok} of {attempts} ({ok / attempts:.0%}), best {micro['best_gflops_ok']:.1f} GFLOPS"
    else:
        only = list(micro["status_counts"]) if len(micro["status_counts"]) == 1 else []
        micro_ok = f"{ok} of {attempts}" + (f" (all {only[0]})" if attempts and only else "")
    build = (
        "same policy" if same_policy else _missed(f"{report['build_s']:.0f} s", report["build_s"], targets["build_s"])
    )
    return [
        _missed(f"{counts.get('ok', 0)} ({held['ok_rate']:.1%})", held["ok_rate"], targets["held_out.ok_rate"]),
        f"{counts.get('format_error', 0)} / {counts.get('compile_error', 0)}",
        f"{other} / {garbled}",
        _missed(
            f"{attempts} ({micro['attempt_share']:.1%})",
            micro["attempt_share"],
            targets["held_out.microkernel.attempt_share"],
        ),
        _missed(micro_ok, micro["ok_share_of_attempts"], targets["held_out.microkernel.ok_share_of_attempts"]),
        build,
        _autotune_cell(tune),
        str(num),
    ]


def markdown_table(folders: list[str | Path]) -> str:
    """The table of the seed reports (and autotuning runs) in `folders`, one column per tier."""
    reports = []
    for folder in map(Path, folders):
        path = folder / "seed_policy.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: run `lab seed-report` for that machine class")
        tune_path = folder / "autotune.json"
        reports.append((read_json(path), read_json(tune_path) if tune_path.exists() else None))
    targets = reports[0][0]["targets"]
    policies = [report["provenance"].get("policy_sha256") for report, _ in reports]
    labels = [
        ("held-out `ok`", _target_text(targets["held_out.ok_rate"], percent=True)),
        ("held-out `format_error` / `compile_error`", ""),
        ("`format_error`: another problem's function / garbled or partial", ""),
        ("micro-kernel attempted", _target_text(targets["held_out.microkernel.attempt_share"], percent=True)),
        (
            "micro-kernel `ok` of its attempts",
            _target_text(targets["held_out.microkernel.ok_share_of_attempts"], percent=True),
        ),
        ("build time (2 cores)", _target_text(targets["build_s"], unit=" s")),
        ("autotuning best / OpenBLAS of the tier (2 threads)", _target_text(AUTOTUNE_TARGET)),
        ("held-out samples", ""),
    ]
    cells = [
        _columns(report, tune, same_policy=i > 0 and policies[i] == policies[0])
        for i, (report, tune) in enumerate(reports)
    ]
    head = ["measure", "target", *(report["target"] for report, _ in reports)]
    rows = [[label, target, *(column[r] for column in cells)] for r, (label, target) in enumerate(labels)]
    return table_text(head, rows)
