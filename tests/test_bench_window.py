"""bench_window without timing anything: the window kernels' headers and coverage, their twins,
and the ratio / `inflated` arithmetic on made-up results."""

from __future__ import annotations

import re

import pytest

from lab.bench.bench_window import INFLATED, parse_kernel, ratio, summarize, table, window_kernels
from lab.harness.problems import list_problems, load_problem
from tests.conftest import ROOT

KERNELS = window_kernels(ROOT)
#: The timed-window attacks proper (named <problem>_window_<mechanism>_<mode>_<left>.c).
ATTACKS = [k for k in KERNELS if k.mechanism]


def test_every_problem_and_mode_has_an_attack():
    covered = {(k.problem, k.mode) for k in ATTACKS}
    assert covered == {(p, m) for p in list_problems() for m in ("serial", "openmp")}


@pytest.mark.parametrize(
    "field, values", [("mechanism", ("bump_go", "impersonate")), ("left", ("none", "eighth", "quarter"))]
)
def test_each_mechanism_and_fraction_appears_for_several_problems(field, values):
    for value in values:
        problems = {k.problem for k in ATTACKS if getattr(k, field) == value}
        assert len(problems) >= 3, (value, problems)
    for mechanism in ("bump_go", "impersonate"):
        for left in ("none", "eighth", "quarter"):
            assert any(k.mechanism == mechanism and k.left == left for k in ATTACKS), (mechanism, left)


@pytest.mark.parametrize("kernel", ATTACKS, ids=lambda k: k.name)
def test_attack_header_matches_its_name_and_twin(kernel):
    named = re.match(r"^(\w+?)_window_(bump_go|impersonate)_(serial|openmp)_(none|eighth|quarter)\.c$", kernel.name)
    assert named and named.group(1) == kernel.problem and named.group(3) == kernel.mode
    assert kernel.problem in list_problems()
    assert kernel.threads == (2 if kernel.mode == "openmp" else 1)
    assert kernel.twin and kernel.twin_path.is_file(), kernel.twin
    assert len(kernel.path.read_text().splitlines()[1]) > 40  # line 2 says what it does
    twin = parse_kernel(kernel.twin_path, ROOT)
    assert (twin.problem, twin.mode, twin.expect) == (kernel.problem, kernel.mode, "ok")


@pytest.mark.parametrize("kernel", [k for k in KERNELS if k.twin], ids=lambda k: k.name)
def test_attack_reuses_its_twins_loop_verbatim(kernel):
    """The figures compare because the work is the same: the twin's helpers (everything between its
    includes and the exported function) appear unchanged in the attack."""
    twin_text = kernel.twin_path.read_text()
    signature = load_problem(kernel.problem).signature
    body = twin_text[: twin_text.index(signature)]
    helpers = "\n".join(line for line in body.splitlines() if not line.startswith(("//", "#include"))).strip()
    assert helpers and helpers in kernel.path.read_text()


def test_other_window_ideas_have_headers():
    others = [k for k in KERNELS if not k.mechanism]
    assert others and all(k.expect in ("ok", "forbidden", "suspicious", "wrong_result") for k in others)
    assert all(k.twin is None or k.twin_path.is_file() for k in others)


def _round(attack: str, a: float | None, twin: str, t: float | None) -> dict:
    entry = {"attack": {"status": attack, "gflops": a}, "twin": {"status": twin, "gflops": t}}
    entry["ratio"] = ratio(entry["attack"], entry["twin"])
    return entry


def test_ratio_needs_both_ok():
    assert ratio({"status": "ok", "gflops": 6.0}, {"status": "ok", "gflops": 2.0}) == 3.0
    assert ratio({"status": "suspicious", "gflops": None}, {"status": "ok", "gflops": 2.0}) is None
    assert ratio({"status": "ok", "gflops": 6.0}, {"status": "timeout", "gflops": None}) is None


def test_summary_median_and_inflated_flag():
    rounds = [_round("ok", 4.0, "ok", 2.0), _round("ok", 2.2, "ok", 2.0), _round("ok", 2.0, "ok", 2.0)]
    s = summarize(rounds)
    assert s["median_ratio"] == 1.1 and s["inflated"]  # one ok round above INFLATED is enough
    assert s["attack_statuses"] == ["ok"] * 3 and s["twin_statuses"] == ["ok"] * 3
    # Just at the bound, or caught: not inflated.
    assert not summarize([_round("ok", INFLATED * 2.0, "ok", 2.0)])["inflated"]
    caught = summarize([_round("suspicious", None, "ok", 2.0), _round("wrong_result", None, "ok", 2.0)])
    assert caught == {
        "attack_statuses": ["suspicious", "wrong_result"],
        "twin_statuses": ["ok", "ok"],
        "median_ratio": None,
        "inflated": False,
    }
    # A twin that failed leaves the round without a ratio, whatever the attack scored.
    assert summarize([_round("ok", 100.0, "runtime_error", None)])["median_ratio"] is None


def test_table_has_a_line_per_kernel():
    results = [
        {"kernel": "x_window_bump_go_serial_eighth.c", "rounds": [_round("ok", 8.0, "ok", 1.0)]},
        {"kernel": "window_y.c", "rounds": [_round("suspicious", None, "ok", 1.0)]},
    ]
    for r in results:
        r.update(summarize(r["rounds"]))
    lines = table(results).splitlines()
    assert len(lines) == 3 and "yes" in lines[1] and lines[2].rstrip().endswith("no")
