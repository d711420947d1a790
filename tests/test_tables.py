"""The notebooks' tables: 3 significant digits and intervals as [lo, hi], never raw floats."""

from __future__ import annotations

from lab.analysis.tables import headline, readable, statuses


def test_readable_rounds_numbers_and_writes_intervals():
    rows = [
        {"arm": "grpo", "mode": "serial", "expected_speedup": 8.254913207, "expected_speedup_ci": [4.5712, 18.8731]},
        {"arm": "grpo", "mode": "openmp", "expected_speedup": 0.000123456, "expected_speedup_ci": None, "n": 144},
    ]
    frame = readable(rows, ["arm", "mode"])
    assert frame.loc[("grpo", "serial"), "expected_speedup"] == "8.25"
    assert frame.loc[("grpo", "serial"), "expected_speedup_ci"] == "[4.57, 18.9]"
    assert frame.loc[("grpo", "openmp"), "expected_speedup"] == "0.000123"
    assert frame.loc[("grpo", "openmp"), "n"] == 144  # counts stay counts
    assert list(readable([], "arm").columns) == []  # nothing to show is an empty table, not an error


def test_headline_and_statuses_of_an_arm():
    metrics = {
        "pass_at_1": 0.5138888,
        "pass_at_1_ci": [0.41, 0.6049],
        "n_samples": 144,
        "status_counts": {"ok": 3, "timeout": 1},
    }
    table = headline(metrics)
    assert list(table.index) == ["n_samples", "pass_at_1"]
    assert table.loc["pass_at_1", "value"] == "0.514" and table.loc["pass_at_1", "95% interval"] == "[0.41, 0.605]"
    assert statuses(metrics).loc["ok", "share"] == "0.75"
