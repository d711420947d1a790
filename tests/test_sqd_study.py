"""The SQD study summary (lab.analysis.sqd_study) on hand-made finished arms."""

from __future__ import annotations

import json

import pytest

from lab.analysis.sqd_study import (
    ELITE_LABELS,
    archive_reread,
    blind_elites,
    elite_audit,
    merge_readings,
    source_hash,
    sqd_study,
)
from lab.files import write_json, write_jsonl
from lab.pipeline.runner import WARM_START
from tests.conftest import ROOT, assert_drawn


def _arm(out, kind, sqd, ok_share, techniques, compliant, seeds=(0, 1, 2)):
    samples, restricted, training = [], [], []
    for seed in seeds:
        for mode in ("serial", "openmp"):
            for i in range(10):
                ok = i < 10 * ok_share
                base = {"seed": seed, "problem": "dgemm", "mode": mode, "status": "ok" if ok else "compile_error"}
                row = base | {"gflops": 20.0 + i if ok else None, "speedup": 10.0 if ok else None}
                samples.append(row | {"techniques": techniques if ok else None})
                restricted.append(row | {"techniques": techniques, "compliant": ok and i < 10 * compliant})
                training.append(
                    base | {"step": i + 1, "gflops": 30.0 + seed if ok else None, "speedup": 12.0, "permitted": None}
                )
            training.append(base | {"status": "forbidden", "gflops": None, "speedup": None})  # by its text
            # Forbidden by its object, after it ran: measured.
            training.append(base | {"status": "forbidden", "gflops": None, "speedup": None, "measured": True})
    write_jsonl(out / "samples.jsonl", samples)
    write_jsonl(out / "samples_restricted.jsonl", restricted)
    if kind == "grpo":
        write_jsonl(out / "training_samples.jsonl", training)
        cells = {"dgemm": {"coverage": 0.25, "qd_score": 40.0, "cells": {"+".join(techniques) or "none": 30.0}}}
        write_json(out / "archive_stats.json", {str(s): cells for s in seeds})
    write_json(out / "config.json", {"kind": kind, "sqd": sqd, "git_commit": "abc"})
    write_json(out / "metrics.json", {"complete": True})


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Four hand-made arms of the DGEMM part, read into one study (made once: its intervals take
    seconds; the tests only read it)."""
    tmp_path = tmp_path_factory.mktemp("study")
    config = tmp_path / "study.yaml"
    config.write_text(f"defaults: {ROOT / 'configs' / 'sqd_study.yaml'}\nresults_dir: {tmp_path / 'dgemm'}\n")
    _arm(tmp_path / "dgemm" / "baseline", "baseline", None, 0.3, ["loop_reorder"], 0.5)
    _arm(tmp_path / "dgemm" / "grpo", "grpo", None, 0.8, ["loop_reorder"], 0.2)
    _arm(tmp_path / "dgemm" / "s0_hard", "grpo", {"violation": "hard"}, 0.5, [], 0.5)
    _arm(tmp_path / "dgemm" / "s1_soft", "grpo", {"violation": "soft"}, 0.6, [], 1.0)
    # The first seed's archive of plain GRPO, with three elites; a reader finds no blocking in
    # the second, which the archive filed as blocked.
    write_json(tmp_path / "dgemm" / "grpo" / "archive.json", {"dgemm": _archive(ELITES)})
    labels = {source_hash(ELITES[1]["source"]): {"techniques": ["loop_reorder"], "readers": [["loop_reorder"]] * 2}}
    write_json(tmp_path / "dgemm" / ELITE_LABELS, {"kernels": labels})
    return sqd_study([config])


def _elite(source: str, techniques: list[str], gflops: float) -> dict:
    return {"descriptor": "+".join(techniques) or "none", "techniques": techniques, "gflops": gflops, "source": source}


def _archive(elites: list[dict]) -> dict:
    cells = {frozenset(e["techniques"]) for e in elites}
    return {"coverage": len(cells) / 128, "qd_score": sum(e["gflops"] for e in elites), "elites": elites}


ELITES = [
    _elite("void dgemm() { /* ikj */ }", ["loop_reorder"], 20.0),
    _elite("void dgemm() { /* ikj, k strip-mined */ }", ["loop_reorder", "cache_blocking"], 25.0),
    _elite("void dgemm() { /* omp */ }", ["openmp"], 30.0),
]


def test_variants_carry_the_named_figures_with_intervals(study):
    assert set(study["variants"]) == {"baseline", "grpo", "s0_hard", "s1_soft"}
    assert {"s2_qd_bonus", "s3_curriculum", "s4_combined"} <= {m.split("/")[1] for m in study["missing"]}
    grpo = study["variants"]["grpo"]["dgemm"]["pooled"]
    for key in ("compliance", "coverage", "qd_score", "measured", "dominant_share", "pass_at_1_ci", "compliance_ci"):
        assert key in grpo
    assert grpo["pass_at_1"] == pytest.approx(0.8) and grpo["dominant_share"] == 1.0
    assert grpo["dominant_set"] == "loop_reorder"
    assert grpo["compliance"] == pytest.approx(0.2 / 0.8)  # of the ok kernels of restricted prompts
    # 8 ok of 10 per seed and mode, and the kernel its object forbade after it ran; compile errors
    # and the kernel its text forbade never ran.
    assert grpo["measured"] == 3 * 2 * (8 + 1)
    assert grpo["coverage"] == 0.25 and grpo["qd_score"] == 40.0
    assert study["mixed_code"] == {} and study["mixed_machine"] == {}
    lo, hi = grpo["expected_speedup_ci"]
    assert lo <= grpo["expected_speedup"] <= hi
    soft = study["variants"]["s1_soft"]["dgemm"]
    assert soft["sqd"] == {"violation": "soft"} and soft["pooled"]["compliance"] == 1.0
    entry = soft["entries"]["dgemm/openmp"]
    assert entry["training_best"]["gflops"] == 32.0 and entry["cells"]["0"] == {"none": 30.0}
    assert entry["coverage"] == 0.25 and entry["qd_score"] == 40.0
    assert set(soft["per_seed"]) == {"0", "1", "2"} and soft["per_seed"]["2"]["training_best_speedup"] == 12.0
    base = study["variants"]["baseline"]["dgemm"]["pooled"]
    assert base["measured"] is None and base["coverage"] is None
    json.dumps(study)  # what write_sqd_study writes


def test_the_study_figure_draws_every_variant(study, tmp_path):
    from lab.analysis.plots import sqd_study as figure

    path = figure(study, tmp_path / "figures")
    assert path.name == "sqd_study.png"
    assert_drawn(path)
    assert figure(study, tmp_path / "figures", "sqd_study_long.png").name == "sqd_study_long.png"
    assert figure({"variants": {}}, tmp_path / "none") is None


def test_the_training_curve_follows_each_seed_over_its_steps():
    from lab.analysis.sqd_study import training_curve

    def row(seed, step, speedup):
        ok = speedup is not None
        return {
            "seed": seed,
            "phase": "grpo",
            "step": step,
            "status": "ok" if ok else "compile_error",
            "speedup": speedup,
        }

    # Seed 0 collapses: 8x at first, then the textbook loop (1x). Seed 1 finds 30x at step 3.
    rows = [row(0, 1, 8.0), row(0, 1, None), row(0, 2, 1.0), row(0, 3, 1.0), row(0, 4, 1.0)]
    rows += [row(1, 1, 2.0), row(1, 2, 2.0), row(1, 3, 30.0), row(1, 4, None)]
    rows += [{"seed": 0, "phase": WARM_START, "step": 1, "status": "ok", "speedup": 99.0}]  # not GRPO
    curve = training_curve(rows, windows=2)
    assert [p["step"] for p in curve] == [2, 4] and [p["seeds"] for p in curve] == [2, 2]
    first, second = curve
    assert first["ok_share"] == pytest.approx((2 / 3 + 1) / 2)
    assert first["median_ok_speedup"] == pytest.approx((4.5 + 2.0) / 2)
    assert first["best_speedup_so_far"] == pytest.approx((8.0 + 2.0) / 2)
    assert second["median_ok_speedup"] == pytest.approx((1.0 + 30.0) / 2)
    assert second["best_speedup_so_far"] == pytest.approx((8.0 + 30.0) / 2)
    assert training_curve([]) == []
    # A seed with nothing in a span keeps its best; a seed with no ok kernel yet leaves the best
    # so far unknown rather than the mean of the others: the curve never falls.
    gaps = [row(0, 1, 30.0), row(1, 1, None), row(0, 2, 1.0), row(1, 2, 2.0), row(1, 3, 3.0)]
    curve = training_curve(gaps, windows=3)
    assert [p["best_speedup_so_far"] for p in curve] == [None, 16.0, 16.5]
    assert [p["seeds"] for p in curve] == [2, 2, 1] and curve[2]["median_ok_speedup"] == 3.0
    # Steps that do not divide into the spans: at most `windows` spans, the last ending at the last step.
    uneven = training_curve([row(0, step, 2.0) for step in range(1, 22)], windows=20)
    assert len(uneven) == 20 and uneven[-1]["step"] == 21 and uneven[0]["step"] == 2
    assert [p["step"] for p in training_curve([row(0, step, 2.0) for step in range(1, 51)])][-1] == 50


def test_the_training_figure_draws_the_trained_variants(study, tmp_path):
    from lab.analysis.plots import sqd_training

    assert study["variants"]["grpo"]["dgemm"]["training_curve"]  # from the hand-made training samples
    assert study["variants"]["baseline"]["dgemm"]["training_curve"] == []  # never trained
    path = sqd_training(study, tmp_path / "figures", "sqd_study_long_training.png")
    assert path.name == "sqd_study_long_training.png"
    assert_drawn(path)
    assert sqd_training(study, tmp_path / "figures").name == "sqd_study_training.png"
    assert sqd_training({"variants": {"baseline": {"dgemm": {"training_curve": []}}}}, tmp_path / "none") is None


def test_archive_figures_do_not_add_rates_of_different_problems():
    from lab.analysis.sqd_study import _archive_figures

    two = {"dgemm": {"coverage": 0.5, "qd_score": 100.0}, "stream_triad": {"coverage": 0.25, "qd_score": 30.0}}
    figures = _archive_figures(two)
    assert figures["coverage"] == 0.375 and figures["qd_score"] is None  # GFLOP/s and GB/s do not add
    assert figures["qd_score_by_problem"] == {"dgemm": 100.0, "stream_triad": 30.0}


def test_arms_made_by_different_code_or_on_different_machines_are_named(tmp_path):
    config = tmp_path / "study.yaml"
    config.write_text(f"defaults: {ROOT / 'configs' / 'sqd_study.yaml'}\nresults_dir: {tmp_path / 'dgemm'}\n")
    for name, code, machine in (("baseline", "a", "zen4"), ("grpo", "b", "zen4"), ("s0_hard", "b", "zen3")):
        _arm(tmp_path / "dgemm" / name, "baseline" if name == "baseline" else "grpo", None, 0.5, [], 0.5)
        saved = json.loads((tmp_path / "dgemm" / name / "config.json").read_text())
        write_json(
            tmp_path / "dgemm" / name / "config.json", saved | {"code": code, "machine": {"fingerprint": machine}}
        )
    study = sqd_study([config])
    assert study["mixed_code"] == {"dgemm": {"baseline": "a", "grpo": "b", "s0_hard": "b"}}
    assert study["mixed_machine"] == {"dgemm": {"baseline": "zen4", "grpo": "zen4", "s0_hard": "zen3"}}


def test_every_arm_is_compared_with_plain_grpo_and_tabled(study):
    versus = study["comparisons"]["dgemm"]
    # Every arm against plain GRPO; the later readings against the first.
    pairs = [("baseline", "grpo"), ("s0_hard", "grpo"), ("s1_soft", "grpo"), ("s1_soft", "s0_hard")]
    assert [(p["a"], p["b"]) for p in versus] == pairs
    soft = versus[2]["metrics"]
    assert set(soft) == {"expected_speedup", "pass_at_1", "compliance", "compliant_expected_speedup"}
    # s1_soft: every ok restricted kernel compliant (1.0) against grpo's 0.25: kept by Holm.
    assert soft["compliance"]["difference"] == pytest.approx(0.75) and soft["compliance"]["verdict_holm"] == "better"
    from lab.analysis.sqd_study import markdown_tables

    # Then the elite audit's two tables (the fixture has labels); the other arms by their config names.
    arms, pairs, _, _ = markdown_tables(study, {"s1_soft": "S1 soft"})
    assert "| S1 soft | 0.60 [" in arms and arms.count("\n") == 5  # heading, rule, four arms
    assert "| 1.00 (none) |" in arms  # the commonest set beside its share
    assert pairs.splitlines()[-1].startswith("| S1 soft − s0_hard | ")
    assert "**+0.75 [" in pairs


def test_study_rereads_each_arms_archive_with_the_labels_beside_it(study):
    reread = study["variants"]["grpo"]["dgemm"]["archive_reread"]["dgemm"]
    assert reread["elites"] == 3 and reread["labelled"] == 1 and reread["in_their_cell"] == 0
    assert reread["coverage"] == 3 / 128 and reread["coverage_reread"] == 2 / 128
    assert reread["qd_score"] == 75.0 and reread["qd_score_reread"] == 55.0  # 25 and 20 share one cell
    assert "archive_reread" not in study["variants"]["s0_hard"]["dgemm"]  # it has no archive.json
    audit = study["elite_audit"]["dgemm"]
    assert audit["elites"] == 3 and audit["labelled"] == 1
    assert audit["recorded"]["cache_blocking"]["fp"] == 1 and audit["recorded"]["exact"] == 0.0


def test_archive_reread_leaves_unlabelled_elites_where_they_are():
    archive = {"dgemm": _archive(ELITES)}
    assert archive_reread(archive, {})["dgemm"] == {
        "elites": 3,
        "labelled": 0,
        "in_their_cell": 0,
        "coverage": 3 / 128,
        "coverage_reread": 3 / 128,
        "qd_score": 75.0,
        "qd_score_reread": 75.0,
    }
    # A reading that moves an elite into an empty cell keeps coverage and the QD score.
    labels = {source_hash(ELITES[2]["source"]): {"techniques": ["openmp", "simd"]}}
    reread = archive_reread(archive, labels)["dgemm"]
    assert reread["coverage_reread"] == 3 / 128 and reread["qd_score_reread"] == 75.0
    assert reread["labelled"] == 1 and reread["in_their_cell"] == 0
    assert archive_reread({"dgemm": {"coverage": 0.1, "qd_score": 9.0}}, labels) == {}  # no sources kept


def test_elite_audit_scores_the_recorded_reading_and_the_readers_agreement():
    sources = [f"void dgemm(int n, const double *A, const double *B, double *C) {{ /* {i} */ }}" for i in range(4)]
    archives = {
        "grpo": {"dgemm": {"elites": [_elite(sources[0], ["openmp"], 9.0), _elite(sources[1], ["packing"], 8.0)]}},
        # The same kernel as an elite of two arms is read once.
        "s0_hard": {"dgemm": {"elites": [_elite(sources[1], ["packing"], 8.0), _elite(sources[2], [], 1.0)]}},
        "s1_soft": {"dgemm": {"elites": [_elite(sources[3], ["simd"], 5.0)]}},  # not labelled
    }
    kernels = {
        source_hash(sources[0]): {"techniques": ["openmp"], "readers": [["openmp"], ["openmp"]]},
        source_hash(sources[1]): {"techniques": [], "readers": [["packing"], []], "decided": "adjudicated"},
        source_hash(sources[2]): {"techniques": ["unrolling"], "readers": [["unrolling"], ["unrolling"]]},
    }
    audit = elite_audit(archives, {"kernels": kernels})
    assert audit["elites"] == 4 and audit["labelled"] == 3 and audit["settled"] == 1
    packing, openmp = audit["recorded"]["packing"], audit["recorded"]["openmp"]
    assert (packing["tp"], packing["fp"], packing["fn"], packing["precision"]) == (0, 1, 0, 0.0)
    assert (openmp["tp"], openmp["fp"], openmp["precision"], openmp["recall"]) == (1, 0, 1.0, 1.0)
    lo, hi = openmp["precision_ci"]
    assert 0.0 < lo < 1.0 == hi  # one kernel: a wide Wilson interval
    assert audit["recorded"]["simd"]["precision"] is None  # no labelled kernel claims it
    unrolling = audit["recorded"]["unrolling"]  # written out by hand, missed by the archive
    assert (unrolling["fn"], unrolling["recall"], unrolling["precision"]) == (1, 0.0, None)
    assert audit["recorded"]["exact"] == pytest.approx(1 / 3)
    readers = audit["readers"]
    assert readers["same_set"] == pytest.approx(2 / 3) and readers["packing"]["agree"] == pytest.approx(2 / 3)
    assert readers["openmp"]["kappa"] == 1.0 and readers["simd"]["kappa"] is None
    assert readers["packing"]["kappa"] == pytest.approx(0.0)  # agreeing 2 of 3 is what chance gives here


def test_blind_elites_hide_the_reading_and_merge_readings_wants_every_disagreement_settled(tmp_path):
    config = tmp_path / "study.yaml"
    config.write_text(f"defaults: {ROOT / 'configs' / 'sqd_study.yaml'}\nresults_dir: {tmp_path / 'dgemm'}\n")
    write_json(tmp_path / "dgemm" / "grpo" / "archive.json", {"dgemm": _archive(ELITES[:2])})
    write_json(tmp_path / "dgemm" / "s0_hard" / "archive.json", {"dgemm": _archive(ELITES[1:])})
    folder = tmp_path / "blind"
    index = blind_elites(config, folder)
    assert sorted(index.values()) == sorted(source_hash(e["source"]) for e in ELITES)
    assert json.loads((folder / "index.json").read_text()) == index
    assert sorted((folder / name).read_text() for name in index) == sorted(e["source"] for e in ELITES)
    first = {name: {"techniques": ["loop_reorder"], "note": "ikj", "sure": True} for name in index}
    second = dict(first)
    split = next(name for name, h in index.items() if h == source_hash(ELITES[1]["source"]))
    flagged = next(name for name, h in index.items() if h == source_hash(ELITES[2]["source"]))
    second[split] = {"techniques": ["cache_blocking", "loop_reorder"], "note": "tiles", "sure": True}
    second[flagged] = {"techniques": ["loop_reorder"], "note": "ikj, but is it?", "sure": False}
    labels = tmp_path / "dgemm" / ELITE_LABELS
    assert sorted(merge_readings(labels, index, first, second, {})) == sorted([split, flagged])
    assert not labels.exists()
    settled = {
        split: {"techniques": ["cache_blocking", "loop_reorder"], "note": "the tiles change the order"},
        flagged: {"techniques": ["loop_reorder"], "note": "ikj it is"},
    }
    assert merge_readings(labels, index, first, second, settled) == []
    kernels = json.loads(labels.read_text())["kernels"]
    mine = kernels[index[split]]
    assert mine["decided"] == "adjudicated" and mine["techniques"] == ["cache_blocking", "loop_reorder"]
    assert mine["readers"] == [["loop_reorder"], ["cache_blocking", "loop_reorder"]]
    assert mine["note"] == "the tiles change the order" and mine["reader_notes"] == ["ikj", "tiles"]
    assert kernels[index[flagged]]["reader_sure"] == [True, False]
    assert [k["decided"] for h, k in kernels.items() if h not in (index[split], index[flagged])] == ["agreed"]
    assert blind_elites(config, tmp_path / "again") == {}  # every elite is labelled now


def test_the_audit_tables_give_each_arm_and_technique(study):
    from lab.analysis.sqd_study import markdown_tables

    arms, techniques = markdown_tables(study)[-2:]
    assert "| plain GRPO | 3 | 0 of 1 | 0.023 → 0.016 | 75 → 55 |" in arms.splitlines()
    assert "| cache_blocking | 1 | 0.00 [0.00, 0.79] | — | — |" in techniques.splitlines()
