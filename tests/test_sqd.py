"""SQD building blocks: the archive (pyribs), staged permitted sets, weak-cell sampling, advancement."""

from __future__ import annotations

from collections import Counter

import pytest

from lab.sqd import SQDConfig, StagedSampler, TechniqueArchive, permission_violation, subsets_up_to
from lab.techniques import TECHNIQUES

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
    assert permission_violation(omp, None) is None
    assert permission_violation(omp, S({"openmp"})) is None
    assert "openmp" in permission_violation(omp, S({"simd"}))
