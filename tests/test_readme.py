"""The documentation's result tables are the committed results, and the README stays a front door.

Every results table is rendered again from the committed JSON: the DGEMM, long-run and ablation
comparisons (lab.analysis.compare.markdown_tables), the suite summary
(lab.analysis.suite.markdown_tables), the SQD study (lab.analysis.sqd_study.markdown_tables),
the detector and cluster-benchmark reports, and the seed policy's measures per CPU tier
(lab.analysis.seed_policy_table). Each must appear verbatim in the file where it
lives (README.md or a page under docs/), and any markdown table in the README or under docs/
whose header is that of a rendered table must be one of the rendered tables, so that no
hand-edited copy survives a change of the JSON. The README stays within 350 lines, and its
relative links (and those of docs/) point to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lab.analysis.compare import load_comparison, markdown_tables
from lab.files import read_json
from tests.conftest import ROOT

README = "README.md"
RESULTS_DOCS = "docs/results"

#: The arms of configs/default.yaml as docs/results/dgemm.md and the README name them.
DGEMM_NAMES = {"baseline": "base policy", "grpo": "GRPO", "grpo_sqd": "GRPO+SQD", "grpo_rft": "warm start + GRPO"}

#: The exploration screen's arms (configs/exploration.yaml) and its results folder.
EXPLORATION_NAMES = {
    "grpo": "GRPO (reference)",
    "clip_higher": "clip-higher (epsilon_high 0.28)",
    "unscaled": "advantages not scaled by the group's std",
    "adaptive_entropy": "adaptive entropy bonus (target 0.45)",
    "combined": "both together",
}
EXPLORATION = "results/machines/1bbdda6206f8/exploration"

#: Whether GRPO keeps the fast family once its warm start shows it correct kernels (configs/demonstrations.yaml).
DEMONSTRATIONS_NAMES = {
    "grpo": "GRPO (reference)",
    "demonstrations": "warm start with demonstrations",
    "demonstrations_kl": "the same, KL 0.04 to it",
    "demonstrations_fitted": "demonstrations fitted 12 epochs",
    "fitted_mild_penalties": "fitted, penalties a tenth",
}
DEMONSTRATIONS = "results/machines/1bbdda6206f8/demonstrations"
#: The rewording arms of the same config, with their own reference, on another machine.
REWORDING_NAMES = {
    "grpo": "GRPO (reference)",
    "demonstrations_fitted": "demonstrations fitted 12 epochs",
    "fitted_reworded": "the same, reworded (warm start and GRPO)",
}
REWORDING = "results/demonstrations"
#: The reworded arm at 200 steps (configs/reworded_long.yaml), this machine's follow-up of REWORDING.
REWORDED_LONG_NAMES = {"fitted_reworded": "reworded warm start + GRPO, 200 steps", "grpo": "GRPO, 200 steps"}
REWORDED_LONG = "results/reworded_long"
#: The exploration screen on the reworded warm start (configs/exploration_screen.yaml).
SCREEN_NAMES = {
    "reworded": "reworded (reference)",
    "reworded_max_at_4": "max@4 rewards",
    "reworded_rarity": "rarity bonus 1.0",
    "reworded_entropy": "adaptive entropy bonus (target 0.2)",
    "reworded_max_at_2": "max@2 rewards",
    "reworded_max_at_4_rarity": "max@4 with the rarity bonus",
    "reworded_clip_higher": "clip-higher, 2 updates per batch",
    "reworded_max_at_4_then_mean": "max@4 for 25 steps, then the plain reward",
    "reworded_max_at_2_require": "SQD asking for its set, on max@2",
    "reworded_max_at_2_qd_bonus": "SQD with the QD bonus, on max@2",
    "reworded_max_at_2_rerun": "max@2 rewards, on the remade warm starts",
    "reworded_max_at_2_steady": "max@2 rewards, on warm starts weighted by steady speedups",
}
SCREEN = "results/exploration_screen"
#: The screen's best at 200 steps (configs/exploration_long.yaml).
EXPLORATION_LONG_NAMES = {
    "reworded_200": "reworded (reference), 200 steps",
    "reworded_max_at_4_200": "max@4 rewards, 200 steps",
    "reworded_max_at_2_200": "max@2 rewards, 200 steps",
    "reworded_max_at_4_then_plain_200": "max@4 for 100 steps, then the plain reward",
}
EXPLORATION_LONG = "results/exploration_long"
#: Studies of this machine whose tables live on their page only: the README shows the study
#: that follows them up, or (a screen) names its verdict in a line.
PAGE_ONLY = {REWORDING, SCREEN, EXPLORATION_LONG}

#: results folder -> (the arms' names as the documents show them, its page under docs/results).
COMPARISONS = {
    "results": (DGEMM_NAMES, "dgemm.md"),
    # The same config measured on a second machine (its own results folder, lab.results).
    "results/machines/1bbdda6206f8": (DGEMM_NAMES, "dgemm.md"),
    # ... and at the AVX2 tier forced there (LAB_TARGET=avx2).
    "results/machines/1bbdda6206f8-avx2": (DGEMM_NAMES, "dgemm.md"),
    "results/long": (
        {
            "baseline": "base policy",
            "grpo": "GRPO, 200 steps",
            "grpo_rft": "warm start + GRPO, 200 steps",
        },
        "long.md",
    ),
    #: TRL's exploration options against the GRPO arm (configs/exploration.yaml), on the second machine.
    EXPLORATION: (EXPLORATION_NAMES, "exploration.md"),
    DEMONSTRATIONS: (DEMONSTRATIONS_NAMES, "demonstrations.md"),
    REWORDING: (REWORDING_NAMES, "demonstrations.md"),
    REWORDED_LONG: (REWORDED_LONG_NAMES, "reworded_long.md"),
    SCREEN: (SCREEN_NAMES, "exploration_screen.md"),
    EXPLORATION_LONG: (EXPLORATION_LONG_NAMES, "exploration_long.md"),
    "results/ablation": (
        {
            "grpo": "reference",
            "reward_log_speedup": "reward log(1 + speedup)",
            "reward_rank": "reward rank within the group",
            "lr_high": "learning rate 3e-4",
            "group_16": "groups of 16, 1 prompt per step",
            "temperature_high": "training temperature 1.3",
        },
        "ablation.md",
    ),
}
SUITE_NAMES = {"baseline": "base", "grpo": "GRPO"}


def _page(name: str) -> str:
    return f"{RESULTS_DOCS}/{name}"


def _comparison(folder: str) -> list[tuple[str, tuple[str, ...]]]:
    names, page = COMPARISONS[folder]
    summary = load_comparison(ROOT / folder)
    assert summary is not None, f"{folder}/comparison.json is missing"
    arms, pairs = markdown_tables(summary, names)
    # The README shows one table of each study: the arms, but for the ablation the differences.
    if folder == "results/ablation":
        return [(arms, (_page(page),)), (pairs, (_page(page), README))]
    # Another machine's study, or one followed up, shows its arms on its page only.
    page_only = "machines" in folder or folder in PAGE_ONLY
    tables = [(arms, (_page(page),) if page_only else (_page(page), README))]
    if pairs.count("\n") > 1:  # a study with one finished arm has no pairs yet
        tables.append((pairs, (_page(page),)))
    return tables


def _suite() -> list[tuple[str, tuple[str, ...]]]:
    from lab.analysis.suite import markdown_tables as suite_tables

    modes, cells = suite_tables(read_json(ROOT / "results" / "suite" / "metrics.json"), SUITE_NAMES)
    return [(modes, (_page("suite.md"), README)), (cells, (_page("suite.md"),))]


def _sqd_study() -> list[tuple[str, tuple[str, ...]]]:
    from lab.analysis.sqd_study import markdown_tables as study_tables

    tables = study_tables(read_json(ROOT / "results" / "sqd_study.json"))
    return [(t, (_page("sqd_study.md"), README) if i == 0 else (_page("sqd_study.md"),)) for i, t in enumerate(tables)]


def _detector() -> list[tuple[str, tuple[str, ...]]]:
    from lab.bench.detector_report import markdown_table as table

    return [(table(read_json(ROOT / "results" / "detector.json")), (_page("detector.md"),))]


def _cluster_bench() -> list[tuple[str, tuple[str, ...]]]:
    from lab.bench.bench_cluster import markdown_table as table

    return [(table(read_json(ROOT / "results" / "bench_cluster.json")), (_page("cluster_bench.md"),))]


#: The seed policy's table per tier (docs/seed_policy.md): a machine class's results folders,
#: the host's own tier first.
SEED_TIERS = ("results/machines/1bbdda6206f8", "results/machines/1bbdda6206f8-avx2")


def _seed_policy() -> list[tuple[str, tuple[str, ...]]]:
    from lab.analysis.seed_policy_table import markdown_table as table

    return [(table([ROOT / folder for folder in SEED_TIERS]), ("docs/seed_policy.md",))]


def _dynamics(results: str, names: dict[str, str], page: str) -> list[tuple[str, tuple[str, ...]]]:
    """The table of a study's training dynamics by kernel family, drawn again from its arms'
    training samples and logs."""
    from lab.analysis.dynamics import family_dynamics, markdown_table
    from lab.files import read_jsonl

    arms = {}
    for name in names:
        folder = ROOT / results / name
        if (folder / "metrics.json").exists():
            arms[name] = family_dynamics(
                read_jsonl(folder / "training_samples.jsonl"), read_jsonl(folder / "train_log.jsonl")
            )
    return [(markdown_table(arms, names), (_page(page),))]


#: Each source of results tables -> its tables rendered from the committed JSON, each with the
#: files it must appear in (its page under docs/results; the README too for a study's headline).
SOURCES = {
    **{f"{folder}/comparison.json": (lambda folder=folder: _comparison(folder)) for folder in COMPARISONS},
    "results/suite/metrics.json": _suite,
    "results/sqd_study.json": _sqd_study,
    "results/detector.json": _detector,
    "results/bench_cluster.json": _cluster_bench,
    f"{SEED_TIERS[0]}/seed_policy.json": _seed_policy,
    f"{EXPLORATION}/grpo/dynamics.json": lambda: _dynamics(EXPLORATION, EXPLORATION_NAMES, "exploration.md"),
    f"{DEMONSTRATIONS}/grpo/dynamics.json": lambda: _dynamics(
        DEMONSTRATIONS, DEMONSTRATIONS_NAMES, "demonstrations.md"
    ),
    f"{REWORDING}/grpo/dynamics.json": lambda: _dynamics(REWORDING, REWORDING_NAMES, "demonstrations.md"),
    f"{REWORDED_LONG}/fitted_reworded/dynamics.json": lambda: _dynamics(
        REWORDED_LONG, REWORDED_LONG_NAMES, "reworded_long.md"
    ),
    f"{SCREEN}/reworded/dynamics.json": lambda: _dynamics(SCREEN, SCREEN_NAMES, "exploration_screen.md"),
    f"{EXPLORATION_LONG}/reworded_max_at_4_200/dynamics.json": lambda: _dynamics(
        EXPLORATION_LONG, EXPLORATION_LONG_NAMES, "exploration_long.md"
    ),
}


def _table_lines(text: str) -> str:
    """The rows of a rendered table (a report may add a line of text below its table)."""
    return "\n".join(line for line in text.splitlines() if line.startswith("|"))


def markdown_tables_in(text: str) -> list[str]:
    """Every markdown table of a document (a run of lines that start with '|'), outside code blocks."""
    tables, rows, fenced = [], [], False
    for line in text.splitlines() + [""]:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            rows.append(line)
            continue
        if rows:
            tables.append("\n".join(rows))
            rows = []
    return tables


def _docs() -> list[Path]:
    return [ROOT / README, *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_results_table_appears_verbatim_where_it_lives(source):
    for table, files in SOURCES[source]():
        for name in files:
            assert table in (ROOT / name).read_text(), (
                f"{name} lacks this table rendered from {source} (or its copy is stale):\n{table}"
            )


def _machine_of(source: str) -> str:
    """The machine class of the results a source's tables come from: that of its arms (a
    comparison), of the report itself, or else of the results folder it lies in."""
    from lab.results import recorded_class, results_owner

    path = ROOT / source
    data = read_json(path)
    arms = sorted(path.parent.glob("*/config.json")) if path.name == "comparison.json" else []
    found = recorded_class(read_json(arms[0])) if arms else recorded_class(data)
    if not found and isinstance(data.get("machine"), list) and len(data["machine"]) == 1:
        found = data["machine"][0]  # the suite's summary: the one class its arms were measured on
    folder = path.parent
    while not found and folder != ROOT:
        found, folder = results_owner(folder), folder.parent
    assert found, f"{source} names no machine"
    return found


#: How far above a table the text that says where it was measured may be.
WHERE_LINES = 30


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_results_table_names_its_machine(source):
    machine = _machine_of(source)
    for table, files in SOURCES[source]():
        first = _table_lines(table).splitlines()[0]
        for name in files:
            lines = (ROOT / name).read_text().splitlines()
            at = next(
                i
                for i, line in enumerate(lines)
                if line == first and "\n".join(lines[i:]).startswith(_table_lines(table))
            )
            above = "\n".join(lines[max(0, at - WHERE_LINES) : at])
            assert machine in above, (
                f"{name}: the table from {source} (line {at + 1}) does not name its machine {machine} above it"
            )


def test_no_results_table_in_the_documents_is_hand_edited():
    rendered = [_table_lines(table) for source in SOURCES.values() for table, _ in source()]
    by_header: dict[str, set[str]] = {}
    for rows in rendered:
        by_header.setdefault(rows.splitlines()[0], set()).add(rows)
    homes = [ROOT / README, *sorted((ROOT / RESULTS_DOCS).glob("*.md"))]
    checked = 0
    for path in homes:
        for table in markdown_tables_in(path.read_text()):
            header = table.splitlines()[0]
            if header in by_header:
                checked += 1
                assert table in by_header[header], (
                    f"{path.relative_to(ROOT)}: this table has the header of a rendered results table "
                    f"but is none of them (stale or edited by hand):\n{table}"
                )
    assert checked >= len(rendered), "fewer results tables in the documents than are rendered"


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


def test_markdown_tables_in_finds_each_table_outside_code_blocks():
    text = "intro\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n| not | a table |\n```\n| c |\n|---|\n"
    assert markdown_tables_in(text) == ["| a | b |\n|---|---|\n| 1 | 2 |", "| c |\n|---|"]


def test_the_readme_is_at_most_350_lines():
    lines = (ROOT / README).read_text().splitlines()
    assert len(lines) <= 350, f"README.md has {len(lines)} lines; move detail to docs/"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@pytest.mark.parametrize("path", _docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # links in code blocks are not links
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor in the same page
        file = (path.parent / target.split("#", 1)[0]).resolve()
        if not file.is_file():
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)} links to files that do not exist: {broken}"
