"""The kernel corpus (tests/kernels): every hostile kernel gets its expected status and
nothing escapes; every legitimate kernel scores ok; optimized code beats naive code.

All files are scored in parallel batches (one per problem), once per test session.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lab.config import MeasureConfig
from lab.harness.evaluate import evaluate_batch
from tests.conftest import EXAMPLES, KERNELS, live_sandbox_processes

pytestmark = pytest.mark.slow  # scores the whole kernel corpus

# Small budgets: classification needs correctness checks, not precise timing.
CORPUS_CONFIG = MeasureConfig(n=128, min_time_s=0.02, min_reps=3, baseline_min_time_s=0.01, run_timeout_s=4.0)
#: Attacks whose expected status the harness does not reach yet (each one a known, documented gap;
#: strict: the day one is fixed, its entry must go).
KNOWN_OPEN: dict[str, str] = {}
_EXPECT = re.compile(r"expect:\s*(\w+)(?:\s+problem:\s*(\w+))?")


def expectation(path: Path) -> tuple[str, str]:
    if path.is_relative_to(EXAMPLES):  # harness/<problem>/examples/*: all correct
        return "ok", path.parent.parent.name
    m = _EXPECT.search(path.read_text().splitlines()[0])
    assert m, f"{path.name}: first line must say 'expect: STATUS'"
    return m.group(1), m.group(2) or "dgemm"


def corpus(kind: str) -> list[Path]:
    files = sorted(p for p in (KERNELS / kind).iterdir() if p.suffix in (".c", ".md"))
    if kind == "legit":
        files += sorted(EXAMPLES.glob("*/examples/*.[cm]*"))
    return files


@pytest.fixture(scope="module")
def scored():
    files = corpus("hostile") + corpus("legit")
    for canary in Path("/tmp").glob("lab_escape_canary_*"):
        canary.unlink()
    by_problem: dict[str, list[Path]] = {}
    for f in files:
        by_problem.setdefault(expectation(f)[1], []).append(f)
    results = {}
    for problem, group in by_problem.items():
        for f, r in zip(
            group, evaluate_batch([f.read_text() for f in group], problem, CORPUS_CONFIG, cache=False, progress=False)
        ):
            results[f] = r
    return results


def test_corpus_is_large_enough():
    assert len(corpus("hostile")) >= 25 and len(corpus("legit")) >= 10


@pytest.mark.parametrize("path", corpus("hostile"), ids=lambda p: p.name)
def test_hostile_kernel(path, scored):
    status, _ = expectation(path)
    result = scored[path]
    if path.name in KNOWN_OPEN:
        pytest.xfail(KNOWN_OPEN[path.name])
    assert result.status == status, f"{path.name}: got {result.status} ({result.detail})"
    assert (result.gflops is None) == (status != "ok")  # an attack that changes nothing may score ok
    # Nothing escaped: no process of a sandbox uid, no file outside the sandbox.
    assert not live_sandbox_processes()
    assert not list(Path("/tmp").glob("lab_escape_canary_*"))


@pytest.mark.parametrize("path", corpus("legit"), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_legit_kernel(path, scored):
    result = scored[path]
    assert result.status == "ok", f"{path.name}: {result.status} ({result.detail})"
    assert result.gflops > 0 and result.baseline_gflops > 0


def test_optimized_beats_naive_by_a_wide_margin():
    naive = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
    fast = (EXAMPLES / "dgemm" / "examples" / "packed_avx512_omp.c").read_text()
    config = MeasureConfig(n=256, min_time_s=0.2)
    slow_r, fast_r = evaluate_batch([naive, fast], "dgemm", config, cache=False, progress=False)
    assert slow_r.status == fast_r.status == "ok"
    assert fast_r.gflops > 5 * slow_r.gflops, (fast_r.gflops, slow_r.gflops)
