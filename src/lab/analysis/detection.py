"""How well a reading of a kernel's techniques matches the truth: per technique, tp/fp/fn,
precision and recall, and the share of kernels read exactly. The detector report
(lab.bench.detector_report) scores the text and object detectors with it; the SQD study
(lab.analysis.sqd_study) scores the archive's cells against hand labels.
"""

from __future__ import annotations

from lab.techniques import TECHNIQUES, problem_techniques


def scores(rows: list[dict], key: str) -> dict:
    """Per technique: tp, fp, fn, precision, recall (over rows whose problem it applies to), and
    `exact`, the share of rows whose predicted set (`key`) equals the true one (`truth`)."""
    out: dict[str, dict] = {}
    for t in TECHNIQUES:
        mine = [r for r in rows if t in problem_techniques(r["problem"]) and r.get(key) is not None]
        tp = sum(t in r[key] and t in r["truth"] for r in mine)
        fp = sum(t in r[key] and t not in r["truth"] for r in mine)
        fn = sum(t not in r[key] and t in r["truth"] for r in mine)
        out[t] = {
            "kernels": len(mine),
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
        }
    judged = [r for r in rows if r.get(key) is not None]
    out["exact"] = sum(set(r[key]) == set(r["truth"]) for r in judged) / len(judged) if judged else None
    return out
