"""The contract of a problem: everything a folder under harness/ must come with to be one of the lab's
problems (harness/README.md, "Adding a problem", lists the same items).

For every problem `lab problems` lists (lab.harness.problems.list_problems): its spec
(problem.toml), driver, NumPy reference, example kernels, hostile kernels with their honest
twins under tests/kernels, a registered kernel generator (lab.policy.seed_policy.problems)
whose every family renders a kernel that the extractor finds and the static source check
passes, a techniques list, and a share of the seed corpus. Cheap checks only: files, headers,
one render per generator family; nothing is compiled or timed (tests/test_kernels.py and
tests/test_seed_policy.py score the kernels).
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from lab import paths
from lab.harness.extract import extract_source
from lab.harness.machine import BLAS_PROBLEMS
from lab.harness.problems import list_problems, load_problem
from lab.harness.static_check import check_source
from lab.policy.seed_policy.corpus import PROBLEM_WEIGHTS, as_completion
from lab.policy.seed_policy.generator import DEFECTS, random_spec, render, serial_safe
from lab.policy.seed_policy.problems import GENERATORS, UnknownGenerator, generator_for
from lab.techniques import TECHNIQUES, problem_techniques
from tests.conftest import KERNELS, ROOT

PROBLEMS = list_problems()
#: The hooks harness/bench.h declares, which every driver defines.
HOOKS = (
    "problem_array_bytes",
    "problem_bind",
    "problem_invoke",
    "problem_alloc",
    "problem_fill",
    "problem_collect",
    "problem_call_baseline",
    "problem_check_full",
    "problem_check_fast",
    "problem_flops",
    "problem_checksum",
)
#: The fields of a corpus kernel's first line (tests/kernels/README.md); problem defaults to dgemm.
_FIELD = re.compile(r"\b(expect|problem|mode|threads|n|twin):\s*(\S+)")


def _header(path) -> dict[str, str]:
    fields = dict(_FIELD.findall(path.read_text().splitlines()[0]))
    return {"problem": "dgemm", "mode": "openmp", **fields}


def _corpus(kind: str) -> dict[str, list]:
    """The kernels of tests/kernels/<kind>, by the problem their first line names."""
    out: dict[str, list] = {}
    for path in sorted((KERNELS / kind).iterdir()):
        if path.suffix in (".c", ".md"):
            out.setdefault(_header(path)["problem"], []).append(path)
    return out


HOSTILE = _corpus("hostile")
LEGIT = _corpus("legit")


@pytest.mark.parametrize("problem", PROBLEMS)
def test_spec_states_what_the_harness_and_prompts_need(problem):
    spec = load_problem(problem)  # refuses a missing or non-positive `bytes`, bad phrasings
    assert spec.name == problem and f" {spec.function}(" in spec.signature
    assert spec.unit in ("GFLOP/s", "Gop/s", "GB/s")
    for n in (spec.default_n, spec.odd_n):
        assert spec.flops(n) > 0 and spec.bytes(n) > 0
    assert len(spec.train_prompts) >= 4 and len(spec.eval_prompts) >= 4
    assert spec.inputs and spec.output and spec.allowed_headers


@pytest.mark.parametrize("problem", PROBLEMS)
def test_driver_defines_every_hook(problem):
    text = load_problem(problem).driver_path.read_text()
    assert '#include "../bench.h"' in text and "LAB_ROLE_RUNNER" in text
    missing = [hook for hook in HOOKS if not re.search(rf"\bstatic\b[^;{{]*\b{hook}\s*\(", text)]
    assert not missing, f"harness/{problem}/driver.c does not define {missing}"


@pytest.mark.parametrize("problem", PROBLEMS)
def test_reference_computes_the_output_from_the_drivers_inputs(problem):
    spec = load_problem(problem)
    n = 9  # small and odd: cheap, and no vector width divides it
    inputs = spec.make_inputs(1, n)
    assert [np.asarray(x).size for x in inputs] == [int(np.prod(a.dims(n))) for a in spec.inputs]
    assert np.asarray(spec.reference(1, n)).size == int(np.prod(spec.output.dims(n)))


@pytest.mark.parametrize("problem", PROBLEMS)
def test_examples_include_the_naive_kernel_and_an_optimized_one(problem):
    spec = load_problem(problem)
    examples = sorted(p for p in (spec.root / "examples").iterdir() if p.suffix in (".c", ".md"))
    assert (spec.root / "examples" / "naive.c") in examples  # lab calibrate times it
    assert len(examples) >= 2
    for path in examples:
        extract_source(path.read_text(), spec.signature)  # each defines the function (FormatError if not)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_hostile_kernels_and_their_legit_twins(problem):
    hostile = HOSTILE.get(problem, [])
    statuses = [_header(p)["expect"] for p in hostile]
    assert statuses.count("wrong_result") >= 3, f"{problem}: too few wrong_result attacks in tests/kernels/hostile"
    assert "forbidden" in statuses
    # An attack on the timed window in each execution model, beside an honest twin with the same loop.
    for mode in ("serial", "openmp"):
        attacks = [p for p in hostile if p.name.startswith(f"{problem}_window_") and _header(p)["mode"] == mode]
        assert attacks, f"no tests/kernels/hostile/{problem}_window_*_{mode}_*.c"
        for attack in attacks:
            twin = ROOT / _header(attack)["twin"]
            assert twin.is_file() and twin.parent == KERNELS / "legit", f"{attack.name}: twin {twin}"
            assert {k: _header(twin)[k] for k in ("expect", "problem", "mode")} == {
                "expect": "ok",
                "problem": problem,
                "mode": mode,
            }
    assert len(LEGIT.get(problem, [])) >= 2


@pytest.mark.parametrize("problem", PROBLEMS)
def test_generator_is_registered_and_every_family_renders_a_kernel_that_passes(problem):
    generator = generator_for(problem)
    assert generator.problem == problem and generator is GENERATORS[problem]
    assert "naive" in generator.families  # random_spec's fallback when nothing else fits a permitted set
    spec_of = load_problem(problem)
    applicable = set(problem_techniques(problem))
    swept = generator.sweep()
    assert {s.family for s in swept} == set(generator.families)  # the sweep reaches every family
    for s in swept:
        assert s.problem == problem and generator.techniques(s) <= applicable, s
        assert generator.defects(s) and set(generator.defects(s)) <= set(DEFECTS), s
    rng = random.Random(0)
    for family in generator.families:
        spec = next(s for s in swept if s.family == family)
        source = extract_source(as_completion(render(spec), rng), spec_of.signature)
        for openmp in (True, False) if serial_safe(spec) else (True,):
            violation = check_source(source, spec_of, openmp=openmp)
            assert violation is None, f"{spec} (openmp={openmp}): {violation.detail}\n{source}"
    drawn = [random_spec(rng, problem, mode=mode) for mode in ("serial", "openmp", None) for _ in range(10)]
    assert all(s.family in generator.families and s.techniques() <= applicable for s in drawn)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_problem_declares_its_techniques(problem):
    declared = load_problem(problem).techniques
    assert declared, f"harness/{problem}/problem.toml: list the `techniques` that apply"
    assert problem_techniques(problem) == tuple(t for t in TECHNIQUES if t in declared)  # all known


@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_seed_corpus_draws_the_problem(problem):
    assert PROBLEM_WEIGHTS.get(problem, 0) > 0


def test_the_registries_name_only_problems_under_harness():
    assert set(GENERATORS) == set(PROBLEMS)
    assert set(PROBLEM_WEIGHTS) == set(PROBLEMS)
    assert BLAS_PROBLEMS <= set(PROBLEMS)
    # A folder without a problem.toml is no problem at all (list_problems skips it): a half-added one.
    folders = [d.name for d in paths.harness_dir().iterdir() if d.is_dir() and not d.name.startswith((".", "_"))]
    assert sorted(folders) == PROBLEMS
    for name in ("no_such_problem", "../dgemm", "DGEMM"):
        with pytest.raises(
            UnknownGenerator, match=f"no kernel generator for problem {re.escape(repr(name))}; registered: dgemm"
        ):
            generator_for(name)
    with pytest.raises(UnknownGenerator):
        random_spec(random.Random(0), "no_such_problem")
