"""The README's result tables are the committed results: each one, rendered again from its
comparison.json (lab.analysis.compare.markdown_tables) or from the suite summary
(lab.analysis.suite.markdown_tables) or from the SQD study (lab.analysis.sqd_study.markdown_tables)
or from a report (the detector, the cluster benchmark),
must appear in the README verbatim."""

from __future__ import annotations

import pytest

from lab.analysis.compare import load_comparison, markdown_tables
from tests.conftest import ROOT

#: results folder -> the arms' names as the README shows them.
TABLES = {
    "results": {
        "baseline": "base policy",
        "grpo": "GRPO",
        "grpo_sqd": "GRPO+SQD",
        "grpo_rft": "warm start + GRPO",
    },
    "results/long": {
        "baseline": "base policy",
        "grpo": "GRPO, 200 steps",
        "grpo_rft": "warm start + GRPO, 200 steps",
    },
    "results/ablation": {
        "grpo": "reference",
        "reward_log_speedup": "reward log(1 + speedup)",
        "reward_rank": "reward rank within the group",
        "lr_high": "learning rate 3e-4",
        "group_16": "groups of 16, 1 prompt per step",
        "temperature_high": "training temperature 1.3",
    },
}


@pytest.mark.parametrize("folder", sorted(TABLES))
def test_readme_tables_match_the_committed_comparison(folder):
    summary = load_comparison(ROOT / folder)
    assert summary is not None, f"{folder}/comparison.json is missing"
    readme = (ROOT / "README.md").read_text().splitlines()
    for table in markdown_tables(summary, TABLES[folder]):
        missing = [line for line in table.splitlines() if line not in readme]
        assert not missing, f"README.md lacks these rows of {folder}/comparison.json (or they are stale): {missing}"


def test_readme_suite_tables_match_the_committed_summary():
    from lab.analysis.suite import markdown_tables as suite_tables
    from lab.files import read_json

    readme = (ROOT / "README.md").read_text().splitlines()
    summary = read_json(ROOT / "results" / "suite" / "metrics.json")
    for table in suite_tables(summary, {"baseline": "base", "grpo": "GRPO"}):
        missing = [line for line in table.splitlines() if line not in readme]
        assert not missing, f"README.md lacks these rows of results/suite/metrics.json (or they are stale): {missing}"


def test_tables_bold_what_holm_keeps_and_what_reaches_openblas():
    d = {"difference": 1.0, "ci": [0.5, 1.5], "ratio": 2.0, "ratio_ci": [1.5, 3.0], "verdict_holm": "better"}
    n = {"difference": 0.1, "ci": [-0.5, 0.6], "verdict_holm": "no clear difference"}
    summary = {
        "arms": {
            "a": {
                "metrics": {"pass_at_1": 0.5, "pass_at_1_ci": [0.4, 0.6], "openblas_gflops": 50.0},
                "training": {"best_gflops_per_seed": {"0": 40.0, "1": 39.9}},
            }
        },
        "pairs": [{"a": "a", "b": "b", "metrics": {"expected_speedup": d, "pass_at_1": n}}],
    }
    arms, pairs = markdown_tables(summary, {"a": "Arm A"})
    assert "| Arm A | 0.50 [0.40, 0.60] |" in arms and "**40.0**, 39.9" in arms
    assert "| Arm A − b | +0.10 [−0.50, +0.60] | **+1.0 [+0.5, +1.5] (2.00× [1.50, 3.00])** |" in pairs


def test_readme_sqd_study_tables_match_the_committed_study():
    from lab.analysis.sqd_study import markdown_tables as study_tables
    from lab.files import read_json

    readme = (ROOT / "README.md").read_text().splitlines()
    for table in study_tables(read_json(ROOT / "results" / "sqd_study.json")):
        missing = [line for line in table.splitlines() if line not in readme]
        assert not missing, f"README.md lacks these rows of results/sqd_study.json (or they are stale): {missing}"


def test_readme_detector_table_matches_the_committed_report():
    from lab.analysis.detector_report import markdown_table
    from lab.files import read_json

    readme = (ROOT / "README.md").read_text().splitlines()
    table = markdown_table(read_json(ROOT / "results" / "detector.json"))
    missing = [line for line in table.splitlines() if line not in readme]
    assert not missing, f"README.md lacks these rows of results/detector.json (or they are stale): {missing}"


def test_readme_cluster_table_matches_the_committed_benchmark():
    from lab.analysis.bench_cluster import markdown_table
    from lab.files import read_json

    readme = (ROOT / "README.md").read_text().splitlines()
    table = markdown_table(read_json(ROOT / "results" / "bench_cluster.json"))
    missing = [line for line in table.splitlines() if line and line not in readme]
    assert not missing, f"README.md lacks these rows of results/bench_cluster.json (or they are stale): {missing}"
