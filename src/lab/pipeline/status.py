"""`lab status`: every result under results/, and whether it stands for this code and machine.

    lab status               # one line per result: state, what, commit, machine, reason
    lab status --json        # [{"path", "kind", "state", "code", "commit", "machine", "seed_policy", ...}]

Two kinds of result are listed. An *arm* is a folder with config.json and a finished
metrics.json (lab.pipeline.runner), judged by lab.pipeline.reuse, and also against the config
in configs/ that writes it, where one does (`config_changes`: a result of another config is
not reused by that config, whatever its state). A *report* is any other results JSON that
records the machine it was measured on (calibration, example scores, autotuning, benchmarks,
the seed policy's report), judged by the same rule from the provenance it records; one written
before provenance was recorded is `older_code`. Summaries computed from arms (comparisons, the
suite and SQD study summaries, figures) are not listed: they are redrawn from the arms.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lab.config import ConfigError, ExperimentConfig, load_config
from lab.files import read_json
from lab.harness.machine import machine_class
from lab.pipeline.reuse import judge
from lab.results import MACHINES, is_finished, recorded_class, recorded_target

#: The columns `lab status` prints, in order.
COLUMNS = ("state", "path", "commit", "machine", "reason")


def _configs(root: Path) -> dict[str, ExperimentConfig]:
    """Every experiment of the configs in configs/, by its results folder relative to `root`."""
    out = {}
    for path in sorted((root / "configs").glob("*.yaml")):
        try:
            config = load_config(path)
        except ConfigError:
            continue
        for cfg in config.experiments.values():
            out.setdefault(os.path.normpath(cfg.out_dir), cfg)
    return out


def _config_key(rel: Path) -> str:
    """A results folder's path as the configs name it: without a machines/<class>/ part."""
    parts = rel.parts
    if MACHINES in parts:
        i = parts.index(MACHINES)
        parts = parts[:i] + parts[i + 2 :]
    return os.path.normpath(Path(*parts))


def _report_facts(data: dict) -> dict | None:
    """A report's provenance in config.json's terms, or None if it records no machine."""
    facts = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
    summary = data.get("machine") if isinstance(data.get("machine"), dict) else {}
    machine = recorded_class(data)
    if not machine:
        return None
    return {
        "measurement": facts.get("measurement"),
        "git_commit": facts.get("git_commit") or data.get("git_commit"),
        "dirty": facts.get("dirty"),
        "machine_class": machine,
        "target": recorded_target(data),
        "policy_sha256": facts.get("policy_sha256"),
        "date": facts.get("date") or data.get("date") or summary.get("date"),
    }


def report_state(path: str | Path) -> str | None:
    """The state of one report file (None: it records no machine, or is no JSON)."""
    data = _read(Path(path))
    facts = _report_facts(data) if data is not None else None
    return judge(facts, policy=_model(data))["state"] if facts else None


def _model(report: dict) -> str | None:
    """The local policy a report was made with, where it names one (the seed policy's report)."""
    model = report.get("model")
    return model if isinstance(model, str) else None


def _read(path: Path) -> dict | None:
    """A JSON object from `path`, or None (with a line on stderr) when it is not one."""
    try:
        data = read_json(path)
    except (ValueError, OSError) as err:
        print(f"lab status: skipping {path}: {err}", file=sys.stderr)
        return None
    return data if isinstance(data, dict) else None


def _finished(folder: Path) -> bool:
    try:
        return is_finished(folder)
    except (ValueError, OSError, AttributeError):
        return False


def result_status(results_dir: str | Path = "results", root: str | Path = ".") -> list[dict]:
    """The state of every arm and report under `results_dir` (paths relative to `root`, the
    repository root whose configs/ name the arms)."""
    root, results = Path(root), Path(results_dir)
    configs = _configs(root)
    here = machine_class()
    rows = []
    for path in sorted(results.rglob("*.json")):
        rel = path.relative_to(root) if path.is_relative_to(root) else path
        if path.name == "config.json" and _finished(path.parent):
            cfg = configs.get(_config_key(rel.parent))
            saved = _read(path)
            if saved is not None:
                rows.append({"path": str(rel.parent), "kind": "arm", **judge(saved, cfg, here)})
        elif (
            path.name not in ("config.json", "metrics.json", "comparison.json")
            and not (path.parent / "config.json").exists()
        ):
            data = _read(path)
            facts = _report_facts(data) if data is not None else None
            if facts is not None:
                rows.append({"path": str(rel), "kind": "report", **judge(facts, None, here, _model(data))})
    return rows


def status_text(rows: list[dict]) -> str:
    """The table `lab status` prints."""
    cells = [[str(r.get(c) or "")[: 12 if c == "commit" else None] for c in COLUMNS] for r in rows]
    for row, r in zip(cells, rows):
        if r.get("config_changes"):
            row[-1] += f"; config differs: {', '.join(r['config_changes'][:4])}"
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    counts = {s: sum(r["state"] == s for r in rows) for s in ("current", "older_code", "other_machine")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()) + f"; this machine is {machine_class()}")
    return "\n".join(lines)
