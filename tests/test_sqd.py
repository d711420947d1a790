"""SQD building blocks: the archive (pyribs), staged permitted sets, weak-cell sampling, advancement."""

from __future__ import annotations

from collections import Counter

import pytest

from lab.config import SQDConfig
from lab.policy.prompts import permitted_in, required_in
from lab.rl.sqd import (
    SQDSchedule,
    StagedSampler,
    TechniqueArchive,
    descriptor,
    permission_violation,
    requirement_violation,
    subsets_up_to,
)
from lab.techniques import TECHNIQUES, detect

S = frozenset


def test_archive_keeps_the_best_per_cell_and_its_source():
    a = TechniqueArchive()
    assert a.add(S({"simd"}), 10.0, "v1")
    assert not a.add(S({"simd"}), 5.0, "worse")
    assert a.add(S({"simd"}), 20.0, "v2")
    assert a.add(S(), 1.5, "naive")
    assert a.best(S({"simd"})) == 20.0 and a.elite_source(S({"simd"})) == "v2"
    assert a.best(S({"openmp"})) is None
    stats = a.stats()
    assert stats["cells_filled"] == 2 and stats["coverage"] == pytest.approx(2 / 128)
    assert stats["qd_score"] == pytest.approx(21.5) and stats["best"] == 20.0
    assert a.cells() == {"simd": 20.0, "none": 1.5}


def test_stage_permits_subsets_up_to_its_size():
    sampler = StagedSampler(SQDConfig(), TechniqueArchive())
    assert sampler.stage == 1 and set(sampler.permitted_sets()) == {S()} | {S({t}) for t in TECHNIQUES}
    sampler.stage = 2
    assert all(len(p) <= 2 for p in sampler.permitted_sets()) and len(sampler.permitted_sets()) == 1 + 7 + 21
    sampler.stage = sampler.last_stage
    assert S(TECHNIQUES) in sampler.permitted_sets() and len(sampler.permitted_sets()) == 128
    assert len(subsets_up_to(0)) == 1


def test_sampling_favours_empty_and_weak_cells():
    archive = TechniqueArchive()
    for t in TECHNIQUES[:6]:
        archive.add(S({t}), 50.0, t)
    archive.add(S(), 1.0, "naive")  # weak: below the median elite
    sampler = StagedSampler(SQDConfig(), archive, seed=1)
    counts = Counter(sampler.sample(4000))
    empty = S({TECHNIQUES[6]})
    assert counts[empty] > 2.5 * counts[S({"simd"})]  # empty (weight 4) vs strong (weight 1)
    assert counts[S()] > 1.5 * counts[S({"simd"})]  # weak (weight 2) vs strong


def test_stages_advance_on_budget_or_coverage():
    sampler = StagedSampler(SQDConfig(steps_per_stage=3), TechniqueArchive())
    advanced = [sampler.end_step(step) for step in range(1, 7)]
    assert advanced == [False, False, True, False, False, True] and sampler.stage == 3
    archive = TechniqueArchive()
    by_cov = StagedSampler(SQDConfig(steps_per_stage=100, coverage_to_advance=0.5), archive)
    for t in TECHNIQUES[:4]:
        archive.add(S({t}), 5.0, t)
    assert by_cov.end_step(1) and by_cov.history[-1] == {"step": 1, "stage": 2, "reason": "coverage"}
    last = StagedSampler(SQDConfig(steps_per_stage=1), TechniqueArchive())
    for step in range(20):
        last.end_step(step)
    assert last.stage == last.last_stage


def test_permission_violation():
    omp = """void dgemm(int n, const double *A, const double *B, double *C) {
    #pragma omp parallel for
    for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { double s = 0;
        for (int k = 0; k < n; k++) s += A[i*n+k]*B[k*n+j]; C[i*n+j] = s; } }"""
    used = detect(omp)
    assert permission_violation(used, None) is None
    assert permission_violation(used, S({"openmp"})) is None
    assert permission_violation(used, ["openmp", "simd"]) is None
    assert permission_violation(used, S({"simd"})) == "uses openmp, which the prompt did not permit"
    assert "openmp" in permission_violation(used, S())


def test_descriptor_names_sets_in_taxonomy_order():
    assert descriptor(S({"openmp", "simd"})) == "simd+openmp" and descriptor(S()) == "none"
    assert descriptor(["register_blocking", "loop_reorder"]) == "loop_reorder+register_blocking"


def test_archive_round_trips_through_its_elites():
    a = TechniqueArchive()
    a.add(S({"simd", "openmp"}), 30.0, "fast")
    a.add(S(), 2.0, "naive")
    elites = a.elites()
    assert [e["descriptor"] for e in elites] == ["simd+openmp", "none"] and elites[0]["source"] == "fast"
    b = TechniqueArchive.from_elites(elites)
    assert b.cells() == a.cells() and b.stats() == a.stats() and b.elite_source(S({"openmp", "simd"})) == "fast"


def test_schedule_rows_state_their_permitted_set_and_follow_the_stage():
    schedule = SQDSchedule(["dgemm"], SQDConfig(steps_per_stage=1), seed=3)
    rows = schedule.rows()
    first = [next(rows) for _ in range(40)]
    for row in first:
        assert row["problem"] == "dgemm" and len(row["permitted"]) <= 1
        assert sorted(permitted_in(row["prompt"][0]["content"])) == sorted(row["permitted"])
    for step in range(1, 4):
        schedule.end_step(step)
    assert schedule.stages() == {"dgemm": 4}
    later = [next(rows) for _ in range(200)]  # the same stream, now drawing from stage 4
    assert max(len(r["permitted"]) for r in later) == 4
    assert [h["stage"] for h in schedule.history()["dgemm"]] == [1, 2, 3, 4]


def test_schedule_rows_ask_for_their_set_when_sqd_requires_it():
    rows = SQDSchedule(["dgemm"], SQDConfig(ask="require"), seed=3).rows()
    for row in (next(rows) for _ in range(20)):
        text = row["prompt"][0]["content"]
        assert "Required optimization techniques:" in text and "Permitted" not in text
        assert sorted(required_in(text)) == sorted(permitted_in(text)) == sorted(row["permitted"])
    assert requirement_violation({"simd", "loop_reorder"}, ["simd"]) is None
    assert requirement_violation(set(), ["openmp", "simd"]) == "lacks simd, openmp, which the prompt required"
    assert requirement_violation(set(), None) is None


def test_schedule_rows_favour_what_the_archive_lacks():
    schedule = SQDSchedule(["dgemm"], SQDConfig(), seed=0)
    for t in TECHNIQUES[:6]:
        schedule.archives["dgemm"].add(S({t}), 50.0, t)
    schedule.archives["dgemm"].add(S(), 50.0, "naive")
    rows = schedule.rows()
    counts = Counter(descriptor(next(rows)["permitted"]) for _ in range(2000))
    assert counts[TECHNIQUES[6]] > 2.5 * counts["simd"]  # the one empty cell of stage 1


def test_schedule_state_restores_stage_history_and_the_random_stream():
    a = SQDSchedule(["dgemm", "dgemv"], SQDConfig(steps_per_stage=2), seed=7)
    for step in range(1, 4):
        a.end_step(step)
    a.archives["dgemm"].add(S({"simd"}), 9.0, "v")
    state = a.state_dict()
    import json

    state = json.loads(json.dumps(state))  # what a checkpoint holds
    archives = {p: TechniqueArchive.from_elites(x.elites(), x.techniques) for p, x in a.archives.items()}
    b = SQDSchedule(["dgemm", "dgemv"], SQDConfig(steps_per_stage=2), seed=0, archives=archives)
    b.load_state_dict(state)
    assert b.stages() == a.stages() == {"dgemm": 2, "dgemv": 2} and b.history() == a.history()
    ra, rb = a.rows(), b.rows()
    assert [next(ra) for _ in range(30)] == [next(rb) for _ in range(30)]


def test_schedule_needs_a_problem():
    with pytest.raises(ValueError, match="at least one problem"):
        SQDSchedule([])


def test_rows_drawn_but_not_trained_on_are_replayed_after_a_resume():
    a = SQDSchedule(["dgemm"], SQDConfig(steps_per_stage=1), seed=2)
    stream = a.rows()
    drawn = [next(stream) for _ in range(4)]  # rows 0-1 trained in step 1; rows 2-3 fetched ahead
    a.end_step(1, trained_rows=[0, 0, 1, 1])
    assert [r["row"] for r in a.pending] == [2, 3] and a.stages() == {"dgemm": 2}
    import json

    b = SQDSchedule(["dgemm"], SQDConfig(steps_per_stage=1), seed=2)
    b.load_state_dict(json.loads(json.dumps(a.state_dict())))
    resumed = b.rows()
    assert [next(resumed) for _ in range(2)] == drawn[2:]  # same prompts, same stage-1 draw
    assert next(resumed)["row"] == 4  # then new rows, numbered on
    a.end_step(2, trained_rows=[2, 3], final=True)
    assert a.stages() == {"dgemm": 2}  # the last step does not advance the stage


def test_sqd_config_rejects_nonsense():
    with pytest.raises(ValueError, match="steps_per_stage"):
        SQDConfig(steps_per_stage=0)
    with pytest.raises(ValueError, match="coverage_to_advance"):
        SQDConfig(coverage_to_advance=1.5)
    with pytest.raises(ValueError, match="weights"):
        SQDConfig(empty_weight=0, weak_weight=0, strong_weight=0)


def test_each_problem_has_an_archive_and_stages_over_its_own_techniques():
    from lab.techniques import problem_techniques

    schedule = SQDSchedule(["dgemm", "histogram"], SQDConfig(steps_per_stage=1), seed=1)
    assert (
        schedule.archives["histogram"].techniques
        == problem_techniques("histogram")
        == (
            "cache_blocking",
            "unrolling",
            "openmp",
        )
    )
    assert schedule.samplers["histogram"].last_stage == 3 and schedule.samplers["dgemm"].last_stage == 7
    for step in range(1, 10):
        schedule.end_step(step)
    rows = [r for r, _ in zip(schedule.rows(), range(40))]
    assert {r["problem"] for r in rows} == {"dgemm", "histogram"}
    for r in rows:
        assert set(r["permitted"]) <= set(problem_techniques(r["problem"]))
    # The last stage of a 3-technique problem permits all three; coverage counts its 8 cells.
    assert any(
        set(r["permitted"]) == {"cache_blocking", "unrolling", "openmp"} for r in rows if r["problem"] == "histogram"
    )
    schedule.archives["histogram"].add(S({"unrolling"}), 3.0, "h")
    assert schedule.archives["histogram"].stats()["coverage"] == 1 / 8
    with pytest.raises(ValueError, match="outside this archive"):
        schedule.archives["histogram"].add(S({"packing"}), 1.0, "x")


def test_suite_entries_are_drawn_by_weight_and_serial_prompts_never_permit_openmp():
    entries = [("dot", "serial", 3.0), ("dot", "openmp", 1.0), ("transpose", "serial", 0.0001)]
    schedule = SQDSchedule(["dot", "transpose"], SQDConfig(steps_per_stage=1), seed=4, entries=entries, threads=2)
    for step in range(1, 6):
        schedule.end_step(step)  # the last stage: every subset, OpenMP included, can be drawn
    rows = [r for r, _ in zip(schedule.rows(), range(400))]
    modes = [r["mode"] for r in rows]
    assert 0.65 < modes.count("serial") / len(rows) < 0.85
    for r in rows:
        text = r["prompt"][0]["content"]
        if r["mode"] == "serial":
            assert "openmp" not in r["permitted"] and "Execution model: serial" in text
        else:
            assert "Execution model: OpenMP" in text and "2 OpenMP threads" in text
    assert any("openmp" in r["permitted"] for r in rows if r["mode"] == "openmp")
    # The entry stream is part of the state: a restored schedule draws the same rows.
    import json

    state = json.loads(json.dumps(schedule.state_dict()))
    twin = SQDSchedule(["dot", "transpose"], SQDConfig(steps_per_stage=1), seed=0, entries=entries, threads=2)
    twin.archives = schedule.archives
    twin.load_state_dict(state)
    for p in twin.samplers:
        twin.samplers[p].archive = schedule.archives[p]
    a, b = schedule.rows(), twin.rows()
    assert [next(a) for _ in range(20)] == [next(b) for _ in range(20)]


def test_cumulative_stages_add_one_technique_at_a_time_from_the_given_order():
    config = SQDConfig(stages="cumulative", order=("loop_reorder", "simd"), start=2, steps_per_stage=1)
    sampler = StagedSampler(config, TechniqueArchive())
    rest = [t for t in TECHNIQUES if t not in ("loop_reorder", "simd")]
    assert sampler.order == ("loop_reorder", "simd", *rest)
    assert set(sampler.permitted_sets()) == {S(), S({"loop_reorder"}), S({"simd"}), S({"loop_reorder", "simd"})}
    sampler.end_step(1)
    assert set(sampler.permitted_sets()) == set(subsets_up_to(3, ("loop_reorder", "simd", rest[0])))
    assert sampler.last_stage == len(TECHNIQUES) - 1
    for step in range(2, 20):
        sampler.end_step(step)
    assert sampler.stage == sampler.last_stage and len(sampler.permitted_sets()) == 2 ** len(TECHNIQUES)
    with pytest.raises(ValueError, match="unknown technique"):
        StagedSampler(SQDConfig(stages="cumulative", order=("tiling",)), TechniqueArchive())


def test_stages_advance_on_a_plateau_of_the_stage_cells():
    archive = TechniqueArchive()
    sampler = StagedSampler(SQDConfig(steps_per_stage=None, plateau_steps=2), archive)
    archive.add(S({"simd"}), 5.0, "a")
    assert not sampler.end_step(1)  # a gain: the plateau count starts again
    archive.add(S({"simd"}), 6.0, "b")
    assert not sampler.end_step(2)
    assert not sampler.end_step(3)  # one step without a gain
    archive.add(S({"simd", "openmp"}), 50.0, "c")  # outside stage 1's cells: no gain there
    assert sampler.end_step(4) and sampler.history[-1] == {"step": 4, "stage": 2, "reason": "plateau"}
    with pytest.raises(ValueError, match="never advance"):
        SQDConfig(steps_per_stage=None)


def test_free_share_mixes_in_plain_prompts():
    schedule = SQDSchedule(["dgemm"], SQDConfig(free_share=0.4), seed=5)
    rows = schedule.rows()
    drawn = [next(rows) for _ in range(500)]
    free = [r for r in drawn if r["permitted"] is None]
    assert 0.3 < len(free) / len(drawn) < 0.5
    assert all(permitted_in(r["prompt"][0]["content"]) is None for r in free)
    stated = [r for r in drawn if r["permitted"] is not None]
    assert [permitted_in(r["prompt"][0]["content"]) for r in stated] == [frozenset(r["permitted"]) for r in stated]
    # Without free prompts the stream is the one the first reading drew.
    plain, zero = (
        SQDSchedule(["dgemm"], SQDConfig(), seed=5).rows(),
        SQDSchedule(["dgemm"], SQDConfig(free_share=0.0), seed=5).rows(),
    )
    assert [next(plain) for _ in range(20)] == [next(zero) for _ in range(20)]


def test_a_problem_trained_only_in_serial_mode_never_stages_openmp():
    """No serial kernel can fill an OpenMP cell: OpenMP leaves the problem's stages and cells, so
    the last stage is reachable by coverage. In both modes it stays."""
    config = SQDConfig(stages="cumulative", order=("loop_reorder", "simd", "openmp"), start=2, steps_per_stage=1)
    serial = SQDSchedule(["dgemm"], config, entries=[("dgemm", "serial", 1.0)]).samplers["dgemm"]
    assert "openmp" not in serial.order and serial.last_stage == len(TECHNIQUES) - 2
    for step in range(1, 10):
        serial.end_step(step)
    assert serial.stage == serial.last_stage and not any("openmp" in s for s in serial.permitted_sets())
    both = SQDSchedule(["dgemm"], config, entries=[("dgemm", "serial", 1.0), ("dgemm", "openmp", 1.0)])
    assert both.samplers["dgemm"].order[:3] == ("loop_reorder", "simd", "openmp")


def test_steps_without_a_problems_prompts_do_not_count_toward_its_plateau():
    """In a suite a problem is drawn only now and then; its plateau counts the steps that trained
    on its prompts (only those can improve its archive)."""
    schedule = SQDSchedule(
        ["dgemm", "dgemv"],
        SQDConfig(steps_per_stage=None, plateau_steps=2),
        entries=[("dgemm", "serial", 1.0), ("dgemv", "serial", 0.0)],  # dgemv is never drawn
    )
    rows = schedule.rows()
    for step in range(1, 4):
        schedule.end_step(step, [next(rows)["row"]])
    assert schedule.stages() == {"dgemm": 2, "dgemv": 1}
    assert schedule.samplers["dgemv"].steps_without_gain == 0
