"""`make detector-report`: how well the technique detector reads kernels, by text alone and
corrected by the compiled object.

    python -m lab.bench.detector_report [--out results/detector.json] [--no-objects]

Two labelled sets:

- `labelled`: the example kernels of every problem (harness/*/examples) and the attacks on the
  detector (tests/kernels/detector: code that hides a technique or fakes one), each with the
  technique set a reader finds in it (tests/kernels/detector/labels.json);
- `generated`: the seed corpus generator's autotuning sweep of every problem
  (lab.policy.seed_policy.generator.sweep_specs), labelled by construction (lab.policy.seed_policy.generator.spec_techniques).

For each set and technique (over the kernels of problems it applies to): true and false
positives, false negatives, precision and recall, and the share of kernels whose whole set is
right; once for `detect()` on the text, once for `confirm()` with the object's facts (OpenMP from
the runtime calls, SIMD from a build without auto-vectorization: lab.harness.static_check.object_facts),
which needs each kernel compiled (and, through the harness, run once at a small size). A
kernel that does not compile has no object figures; `text_where_compiled` scores the text over
the kernels that did, the same kernels as `object`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from lab import paths
from lab.analysis.detection import scores
from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate_batch
from lab.harness.machine import machine_summary
from lab.policy.seed_policy.generator import render, spec_techniques, sweep_specs
from lab.results import machine_path, report_provenance
from lab.techniques import TECHNIQUES, confirm, detect

LABELS = Path("tests") / "kernels" / "detector" / "labels.json"
#: Small and quick: the facts come from the object, the timing is not used.
_MEASURE = MeasureConfig(
    n=64, mode="openmp", threads=2, min_time_s=0.01, min_reps=3, baseline=False, verify_techniques=True
)


def _read(rows: list[dict], objects: bool) -> list[dict]:
    """Each row (source, problem, truth) with `text` and, with objects, `object` predictions.
    Kernels are compiled in OpenMP mode, where a kernel that uses OpenMP is allowed to."""
    for r in rows:
        r["text"] = sorted(detect(r["source"], r["problem"]))
    if objects:
        by_problem: dict[str, list[dict]] = {}
        for r in rows:
            by_problem.setdefault(r["problem"], []).append(r)
        for problem, group in by_problem.items():
            results = evaluate_batch([r["source"] for r in group], problem, _MEASURE, progress=False)
            for r, res in zip(group, results):
                r["facts"], r["status"] = res.object_facts, res.status
                r["object"] = sorted(confirm(set(r["text"]), res.object_facts, problem)) if res.object_facts else None
    return rows


def labelled_rows(root: Path) -> list[dict]:
    labels = json.loads((root / LABELS).read_text())
    rows = []
    for path, label in sorted(labels.items()):
        rows.append(
            {
                "kernel": path,
                "problem": label["problem"],
                "truth": sorted(label["techniques"]),
                "source": (root / path).read_text(),
            }
        )
    return rows


def generated_rows() -> list[dict]:
    rows = []
    for problem in sorted({p.parent.parent.name for p in paths.harness_dir().glob("*/examples/*.c")}):
        for i, spec in enumerate(sweep_specs(problem)):
            rows.append(
                {
                    "kernel": f"{problem}/sweep-{i}",
                    "problem": problem,
                    "truth": sorted(spec_techniques(spec)),
                    "source": render(spec),
                }
            )
    return rows


def report(root: Path, objects: bool = True) -> dict:
    out: dict = {"machine": machine_summary(), "objects": objects, "sets": {}}
    for name, rows in (("labelled", labelled_rows(root)), ("generated", generated_rows())):
        rows = _read(rows, objects)
        entry = {"kernels": len(rows), "text": scores(rows, "text")}
        if objects:
            entry["object"] = scores(rows, "object")
            # The object's scores cover the kernels that compiled; the text's over the same kernels
            # make the two comparable.
            entry["text_where_compiled"] = scores([r for r in rows if r.get("object") is not None], "text")
        entry["misread"] = [
            {k: r.get(k) for k in ("kernel", "truth", "text", "object", "facts", "status")}
            for r in rows
            if set(r["text"]) != set(r["truth"])
            or (r.get("object") is not None and set(r["object"]) != set(r["truth"]))
        ]
        out["sets"][name] = entry
    return out


def markdown_table(report: dict) -> str:
    """The README's table: per technique, over the labelled kernels that compiled, precision
    and recall by the text and with the object's verdict."""
    from lab.analysis.compare import number_text, table_text

    labelled = report["sets"]["labelled"]
    text, obj = labelled["text_where_compiled"], labelled["object"]
    pr = lambda s: f"{number_text(s['precision'], 2)} / {number_text(s['recall'], 2)}"  # noqa: E731
    rows = [[t, str(text[t]["kernels"]), pr(text[t]), pr(obj[t])] for t in TECHNIQUES]
    head = ["technique", "kernels", "text: precision / recall", "with the object: precision / recall"]
    return table_text(head, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/detector.json")
    parser.add_argument("--no-objects", action="store_true", help="text detection only (no compiling)")
    args = parser.parse_args(argv)
    args.out = str(machine_path(args.out))  # this machine's results folder (lab.results)
    os.environ.setdefault("LAB_CACHE_DIR", tempfile.mkdtemp(prefix="lab-detector-cache-"))
    root = paths.repo_root() or Path.cwd()
    result = report(root, objects=not args.no_objects)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({**result, "provenance": report_provenance()}, indent=1) + "\n")
    for name, entry in result["sets"].items():
        for how in ("text", "object"):
            if how not in entry:
                continue
            s = entry[how]
            cells = ", ".join(
                f"{t} {s[t]['precision'] or 0:.2f}/{s[t]['recall'] or 0:.2f}" for t in TECHNIQUES if s[t]["kernels"]
            )
            print(f"{name} ({entry['kernels']} kernels), {how}: exact {s['exact']:.2f}; precision/recall: {cells}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
