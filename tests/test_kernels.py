"""The kernel corpus (tests/kernels): every hostile kernel gets its expected status and
nothing escapes; every legitimate kernel scores ok; optimized code beats naive code.

All files are scored in parallel batches (one per problem), once per test session.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from lab.config import MODES, STATUSES, MeasureConfig
from lab.harness.evaluate import evaluate_batch
from lab.harness.problems import list_problems
from tests.conftest import (
    _AVX512,
    AVX512_MISMATCH,
    CPU_AVX512,
    EXAMPLES,
    KERNELS,
    assert_status_on_this_cpu,
    lacks_avx512_for,
    live_sandbox_processes,
    on_this_cpu,
)

pytestmark = [
    pytest.mark.slow,  # scores the whole kernel corpus
    # The first test waits for the whole corpus to be scored (2.5 minutes alone on 2 cores, longer
    # beside another test worker); every kernel has its own time limits in the harness.
    pytest.mark.timeout(900),
]

# Small budgets: classification needs correctness checks, not precise timing.
CORPUS_CONFIG = MeasureConfig(n=128, min_time_s=0.02, min_reps=3, baseline_min_time_s=0.01, run_timeout_s=4.0)
#: The run limit of a kernel expected to time out: a second shows it is stopped as well as four do.
TIMEOUT_RUN_S = 1.0
#: Attacks whose expected status the harness does not reach yet (each one a known, documented gap:
#: file name -> why). Each is a strict xfail of test_hostile_kernel: the day one is fixed, its
#: test XPASSes, which fails the run until the entry goes.
KNOWN_OPEN: dict[str, str] = {}
#: How often a kernel is measured again whose verdict is one a neighbour's load can cause and
#: not the one its header expects. Beside another test worker (`make test` runs two), that load
#: can slow a kernel's baseline run past the calibration's factor, and the harness rightly
#: distrusts the speedup (`suspicious`), or slow a kernel that waits on the measurer past its run
#: limit (`timeout`). A kernel the harness wrongly distrusts or stops gets that verdict every
#: time; a verdict the load cannot cause (an attack scored `ok`) is never measured again.
REMEASURE = 2
LOAD_VERDICTS = frozenset({"suspicious", "timeout"})
_EXPECT = re.compile(r"expect:\s*(\w+)")
_OPTION = re.compile(r"\b(problem|mode|threads|n):\s*(\w+)")
_USES_OPENMP = re.compile(r"#\s*pragma\s+omp|<omp\.h>|\bomp_\w+\s*\(")
#: The keys a header line may carry (tests/kernels/README.md; `twin:` is bench-window's).
_HEADER_KEYS = frozenset({"expect", "problem", "mode", "threads", "n", "twin"})
#: What a header may expect: every status but `harness_error`, which blames the host, not the kernel.
KERNEL_STATUSES = frozenset(STATUSES) - {"harness_error"}


def expectation(path: Path) -> tuple[str, str, MeasureConfig]:
    """(status, problem, how to measure) of a corpus file. Its first line says `expect: STATUS`,
    optionally followed by `problem: NAME` (default dgemm), `mode: serial|openmp` (openmp),
    `threads: T` (1) and `n: N` (128): a race needs 2 threads and enough work to show. A kernel
    expected to time out runs under TIMEOUT_RUN_S."""
    if path.is_relative_to(EXAMPLES):  # harness/<problem>/examples/*: all correct
        return "ok", path.parent.parent.name, CORPUS_CONFIG
    first = path.read_text().splitlines()[0]
    m = _EXPECT.search(first)
    assert m, f"{path.name}: first line must say 'expect: STATUS'"
    options = dict(_OPTION.findall(first[m.end() :]))
    config = dataclasses.replace(
        CORPUS_CONFIG,
        mode=options.get("mode", "openmp"),
        threads=int(options.get("threads", 1)),
        n=int(options.get("n", CORPUS_CONFIG.n)),
        run_timeout_s=TIMEOUT_RUN_S if m.group(1) == "timeout" else CORPUS_CONFIG.run_timeout_s,
    )
    return m.group(1), options.get("problem", "dgemm"), config


def corpus(kind: str) -> list[Path]:
    files = sorted(p for p in (KERNELS / kind).iterdir() if p.suffix in (".c", ".md"))
    if kind == "legit":
        files += sorted(EXAMPLES.glob("*/examples/*.[cm]*"))
    return files


def examples() -> list[Path]:
    return sorted(EXAMPLES.glob("*/examples/*.[cm]*"))


def _hostile_cases(known_open: dict[str, str]) -> list:
    """One case per hostile kernel; a known open gap is a strict xfail, so its fix fails the run."""
    return [
        pytest.param(
            p,
            id=p.name,
            marks=[pytest.mark.xfail(strict=True, reason=known_open[p.name])] if p.name in known_open else [],
        )
        for p in corpus("hostile")
    ]


def _load_verdict(status: str, path: Path) -> bool:
    """Whether `status` could be the other worker's doing rather than the kernel's (REMEASURE)."""
    return status in LOAD_VERDICTS and status != expectation(path)[0]


@pytest.fixture(scope="module")
def scored():
    """Every corpus file measured as its header says, and every example also in serial mode:
    {(path, mode): result}."""
    for canary in Path("/tmp").glob("lab_escape_canary_*"):
        canary.unlink()
    jobs: dict[tuple[str, MeasureConfig], list[Path]] = {}
    for f in corpus("hostile") + corpus("legit"):
        _, problem, config = expectation(f)
        jobs.setdefault((problem, config), []).append(f)
    for f in examples():
        jobs.setdefault((f.parent.parent.name, dataclasses.replace(CORPUS_CONFIG, mode="serial")), []).append(f)
    results = {}
    for (problem, config), group in jobs.items():
        todo = group
        for _ in range(1 + REMEASURE):
            texts = [f.read_text() for f in todo]
            for f, r in zip(todo, evaluate_batch(texts, problem, config, cache=False, progress=False)):
                results[f, config.mode] = r
            todo = [f for f in group if _load_verdict(results[f, config.mode].status, f)]
            if not todo:
                break
    return results


def test_every_corpus_file_is_scored_with_a_valid_header():
    """Nothing in the corpus folders is left out by its suffix, and every header says one of the
    harness's statuses with options the README allows: a typo (`thread: 2`, `expect: wrong`)
    would otherwise be scored with defaults, or expect a status no kernel can get."""
    problems = set(list_problems())
    for kind in ("hostile", "legit"):
        assert sorted((KERNELS / kind).iterdir()) == [f for f in corpus(kind) if f.parent == KERNELS / kind]
    for f in corpus("hostile") + corpus("legit"):
        if f.is_relative_to(EXAMPLES):
            continue
        lines = f.read_text().splitlines()
        opener = "<!--" if f.suffix == ".md" else "//"
        assert lines[0].startswith(opener) and lines[1].startswith(opener), f"{f.name}: lines 1-2 are comments"
        keys = re.findall(r"\b(\w+):", lines[0])
        assert keys[0] == "expect" and set(keys) <= _HEADER_KEYS and len(keys) == len(set(keys)), (f.name, keys)
        status, problem, config = expectation(f)
        assert status in KERNEL_STATUSES and problem in problems and config.mode in MODES, (f.name, lines[0])
        assert config.threads >= 1 and config.n >= 1, (f.name, lines[0])


def test_the_corpus_covers_every_status_and_its_legit_kernels_expect_ok():
    hostile = {expectation(f)[0] for f in corpus("hostile")}
    assert hostile == KERNEL_STATUSES  # each verdict has kernels that must get it (ok: attacks that change nothing)
    assert {f.name: expectation(f)[0] for f in corpus("legit")} == {f.name: "ok" for f in corpus("legit")}
    assert len(corpus("legit")) > len(examples())  # tests/kernels/legit is scored, not only harness/*/examples


def test_kernels_of_the_newer_problems_are_named_after_them():
    """README: files for a problem other than DGEMM start with its name (older DGEMV ones may not)."""
    misnamed = [
        f.name
        for f in corpus("hostile") + corpus("legit")
        if not f.is_relative_to(EXAMPLES)
        and (problem := expectation(f)[1]) not in ("dgemm", "dgemv")
        and not f.name.startswith(problem + "_")
    ]
    assert misnamed == []


def test_each_avx512_attack_that_must_run_has_an_avx2_form_with_the_same_header():
    """README: the nine hostile kernels written with AVX-512 whose attack needs it to run (not
    stopped by their text) each have an AVX2 form beside it, so the attack runs on any CPU."""
    hostile = KERNELS / "hostile"
    needs_avx512 = sorted(
        f.name
        for f in corpus("hostile")
        if _AVX512.search(f.read_text()) and expectation(f)[0] not in {"format_error", "forbidden", "compile_error"}
    )
    assert len(needs_avx512) == 9, needs_avx512
    for name in needs_avx512:
        stem = name.removesuffix(".c")
        forms = {stem.replace("avx512", "avx2") + ".c", stem + "_avx2.c"} - {name}
        (avx2,) = [hostile / n for n in forms if (hostile / n).is_file()]
        assert not _AVX512.search(avx2.read_text()), avx2.name
        assert avx2.read_text().splitlines()[0] == (hostile / name).read_text().splitlines()[0], avx2.name


def test_known_open_gaps_are_strict_xfails_of_existing_kernels():
    names = {f.name for f in corpus("hostile")}
    assert set(KNOWN_OPEN) <= names, set(KNOWN_OPEN) - names  # no stale entry
    gap = sorted(names)[len(names) // 2]
    cases = _hostile_cases({gap: "a documented gap"})
    assert [c.id for c in cases] == [f.name for f in corpus("hostile")]
    marked = [c for c in cases if c.marks]
    assert [c.id for c in marked] == [gap] and [(m.name, m.kwargs) for m in marked[0].marks] == [
        ("xfail", {"strict": True, "reason": "a documented gap"})
    ]
    assert not any(c.marks for c in _hostile_cases({}))


def test_only_load_verdicts_the_header_does_not_expect_are_measured_again():
    legit, hostile = EXAMPLES / "dgemm" / "examples" / "naive.c", KERNELS / "hostile"
    assert _load_verdict("suspicious", legit) and _load_verdict("timeout", legit)
    assert not _load_verdict("timeout", hostile / "infinite_loop_for.c")  # what its header expects
    assert _load_verdict("suspicious", hostile / "infinite_loop_for.c")
    assert not _load_verdict("ok", hostile / "dot_rng_regenerate_inputs.c")  # an attack that got through
    assert not _load_verdict("wrong_result", legit)


def test_nothing_escaped_the_sandbox(scored):
    """Checked once beside each kernel's own test, so that a known gap's xfail cannot hide an escape."""
    assert len(scored) == len(corpus("hostile")) + len(corpus("legit")) + len(examples())
    assert not live_sandbox_processes()
    assert not list(Path("/tmp").glob("lab_escape_canary_*"))


@pytest.mark.parametrize("path", _hostile_cases(KNOWN_OPEN))
def test_hostile_kernel(path, scored):
    status, _, config = expectation(path)
    result = scored[path, config.mode]
    text = path.read_text()
    # Nothing escaped: no process of a sandbox uid, no file outside the sandbox.
    assert not live_sandbox_processes()
    assert not list(Path("/tmp").glob("lab_escape_canary_*"))
    if on_this_cpu(status, text) != status:
        assert_status_on_this_cpu(result, status, text, path.name)
        pytest.skip(f"{path.name} is written with AVX-512, which this CPU lacks: the attack cannot run here")
    assert result.status == status, f"{path.name}: got {result.status} ({result.detail})"
    assert (result.gflops is None) == (status != "ok")  # an attack that changes nothing may score ok
    if status == "compile_error" and lacks_avx512_for(text):
        # Stopped by its own error, not by the AVX-512 this CPU lacks.
        assert not AVX512_MISMATCH.search(result.detail), f"{path.name}: {result.detail}"


@pytest.mark.parametrize("path", corpus("legit"), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_legit_kernel(path, scored):
    result = scored[path, expectation(path)[2].mode]
    assert_status_on_this_cpu(result, "ok", path.read_text(), path.name)
    if result.status == "ok":
        assert result.gflops > 0 and result.baseline_gflops > 0


@pytest.mark.parametrize("path", examples(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_example_in_serial_mode(path, scored):
    """Serial mode: an example without OpenMP scores ok; one with OpenMP is forbidden."""
    result = scored[path, "serial"]
    text = path.read_text()
    assert_status_on_this_cpu(result, "forbidden" if _USES_OPENMP.search(text) else "ok", text, path.name)
    assert result.mode == "serial" and result.threads == 1


def test_optimized_beats_naive_by_a_wide_margin():
    naive = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
    fast = (EXAMPLES / "dgemm" / "examples" / ("packed_avx512_omp.c" if CPU_AVX512 else "avx2_fma.c")).read_text()
    config = MeasureConfig(n=256, min_time_s=0.2)
    slow_r, fast_r = evaluate_batch([naive, fast], "dgemm", config, cache=False, progress=False)
    assert slow_r.status == fast_r.status == "ok"
    assert fast_r.gflops > 5 * slow_r.gflops, (fast_r.gflops, slow_r.gflops)
