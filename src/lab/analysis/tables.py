"""Tables a person reads in a notebook: pandas frames with 3 significant digits and intervals
as `[lo, hi]`, instead of dicts of 16-digit floats.

    headline(metrics)          # one row per metric: value, 95% interval
    settings(cfg)              # what an experiment sets differently from the defaults
    readable(rows, index)      # any rows of numbers (a comparison, the suite's tables), formatted
"""

from __future__ import annotations

import pandas as pd

from lab.config import ExperimentConfig, non_default_settings

#: The metrics of a single-problem arm a notebook shows first, each with its interval where it has one.
HEADLINE = (
    "n_samples",
    "pass_at_1",
    "median_gflops_ok",
    "best_gflops",
    "expected_speedup",
    "median_fraction_of_openblas",
    "distinct_technique_sets_ok",
)


def number(value) -> str:
    """A number in 3 significant digits (integers as they are); '—' for none."""
    if value is None:
        return "—"
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    return f"{value:.3g}"


def interval(ci) -> str:
    """`[lo, hi]` in 3 significant digits; '' for none."""
    return f"[{number(ci[0])}, {number(ci[1])}]" if ci else ""


def headline(metrics: dict, keys: tuple[str, ...] = HEADLINE) -> pd.DataFrame:
    """The headline metrics of an arm's metrics.json: value and 95% interval, one row each."""
    rows = [
        {"metric": k, "value": number(metrics.get(k)), "95% interval": interval(metrics.get(f"{k}_ci"))}
        for k in keys
        if k in metrics
    ]
    return pd.DataFrame(rows).set_index("metric")


def statuses(metrics: dict) -> pd.DataFrame:
    """How the arm's samples ended: count and share per status."""
    counts = metrics.get("status_counts") or {}
    total = sum(counts.values()) or 1
    return pd.DataFrame([{"status": s, "samples": n, "share": number(n / total)} for s, n in counts.items()]).set_index(
        "status"
    )


def settings(cfg: ExperimentConfig) -> pd.DataFrame:
    """The settings an experiment changes from the defaults (lab.config), one row each."""
    rows = [{"setting": k, "value": str(v)} for k, v in non_default_settings(cfg.to_dict()).items()]
    return pd.DataFrame(rows).set_index("setting")


def _cell(value):
    """One value as `readable` shows it: numbers in 3 significant digits, a pair of numbers (an
    interval) as `[lo, hi]`, anything else as it is."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(x, (int, float)) for x in value):
        return interval(value)
    if isinstance(value, float):
        return number(value)
    return value


def readable(rows: list[dict], index: str | list[str] | None = None) -> pd.DataFrame:
    """Rows of a results file as a person reads them: numbers in 3 significant digits, intervals
    as `[lo, hi]`, indexed by `index` (a column or a list of columns)."""
    frame = pd.DataFrame([{k: _cell(v) for k, v in row.items()} for row in rows])
    return frame.set_index(index) if index is not None and len(frame) else frame
