"""lab.rl.reward: penalty tiers, positive terms, and the TRL-contract HarnessReward (with a fake evaluator)."""

from __future__ import annotations

import math
import re

import pytest

from lab.config import STATUSES, ExperimentConfig, MeasureConfig, RewardConfig, SQDConfig
from lab.harness.evaluate import EvalResult
from lab.harness.extract import source_or_none
from lab.harness.problems import load_problem
from lab.rl.reward import (
    TERM_WEIGHTS,
    TERMS,
    HarnessReward,
    completion_text,
    group_rewards,
    max_at_k,
    performance_scale,
    rarity_factors,
    reward_from_result,
    term_rewards,
)
from lab.rl.sqd import TechniqueArchive
from lab.techniques import detect, problem_techniques
from tests.conftest import EXAMPLES, KERNELS


class FakeEvaluator:
    """Records each call; scores a text by a table, 'ok' texts earn gflops = their length."""

    def __init__(self, statuses: dict[str, str] | None = None):
        self.statuses = statuses or {}
        self.calls: list[tuple[list[str], str]] = []
        self.configs: list[MeasureConfig] = []

    def __call__(self, texts, problem, config):
        self.calls.append((list(texts), problem))
        self.configs.append(config)
        out = []
        for t in texts:
            status = self.statuses.get(t, "ok")
            out.append(
                EvalResult(status=status, gflops=float(len(t)), speedup=2.0)
                if status == "ok"
                else EvalResult(status=status)
            )
        return out


# ---- RewardConfig and reward_from_result ----------------------------------------------


def test_default_penalties_match_the_tiers():
    assert RewardConfig().penalties == {
        "format_error": -100.0,
        "forbidden": -100.0,
        "compile_error": -40.0,
        "timeout": -30.0,
        "runtime_error": -20.0,
        "wrong_result": -10.0,
        "suspicious": -10.0,
    }
    assert RewardConfig().positive == "gflops"
    assert RewardConfig().harness_error == "group_mean"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("format_error", -100.0),
        ("forbidden", -100.0),
        ("compile_error", -40.0),
        ("timeout", -30.0),
        ("runtime_error", -20.0),
        ("wrong_result", -10.0),
    ],
)
def test_failure_status_reward(status, expected):
    r = reward_from_result(EvalResult(status=status), RewardConfig())
    assert r == expected and type(r) is float


@pytest.mark.parametrize("status", STATUSES)
def test_every_status_maps_to_a_float(status):
    result = EvalResult(status=status, gflops=3.5, speedup=1.5) if status == "ok" else EvalResult(status=status)
    config = RewardConfig(harness_error=0.0) if status == "harness_error" else RewardConfig()
    assert type(reward_from_result(result, config)) is float


def test_harness_error_takes_its_groups_mean_so_its_advantage_is_zero():
    ok, wrong, err = (
        EvalResult(status="ok", gflops=30.0),
        EvalResult(status="wrong_result"),
        EvalResult(status="harness_error"),
    )
    rewards = group_rewards([ok, wrong, err, ok], ["p", "p", "p", "q"], RewardConfig())
    assert rewards == [30.0, -10.0, 10.0, 30.0]
    group = rewards[:3]
    assert group[2] - sum(group) / 3 == pytest.approx(0.0)  # GRPO's advantage of the failed row
    assert group_rewards([err, err], ["p", "p"], RewardConfig()) == [0.0, 0.0]
    assert group_rewards([err], ["p"], RewardConfig(harness_error=-5.0)) == [-5.0]


def test_harness_reward_groups_by_prompt():
    fake = lambda texts, problem, config: [  # noqa: E731
        EvalResult(status="harness_error") if "boom" in t else EvalResult(status="ok", gflops=float(len(t)))
        for t in texts
    ]
    reward = HarnessReward("dgemm", evaluate=fake)
    assert reward(["aaaa", "boom", "bb", "boom"], prompts=["x", "x", "y", "z"]) == [4.0, 4.0, 2.0, 0.0]


def test_penalties_are_ordered_from_worst_to_mildest():
    p = RewardConfig().penalties
    assert (
        p["forbidden"]
        == p["format_error"]
        < p["compile_error"]
        < p["timeout"]
        < p["runtime_error"]
        < p["wrong_result"]
        < 0
    )


def test_custom_penalties_are_used():
    cfg = RewardConfig(penalties={**RewardConfig().penalties, "timeout": -7})
    assert reward_from_result(EvalResult(status="timeout"), cfg) == -7.0


@pytest.mark.parametrize(
    ("positive", "expected"),
    [
        ("gflops", 12.5),
        ("speedup", 6.0),
        ("log_speedup", math.log1p(6.0)),
    ],
)
def test_positive_terms(positive, expected):
    r = reward_from_result(EvalResult(status="ok", gflops=12.5, speedup=6.0), RewardConfig(positive=positive))
    assert r == pytest.approx(expected) and type(r) is float


def test_log_speedup_is_log1p():
    cfg = RewardConfig(positive="log_speedup")
    assert reward_from_result(EvalResult(status="ok", gflops=1.0, speedup=math.e - 1), cfg) == pytest.approx(1.0)
    assert reward_from_result(EvalResult(status="ok", gflops=1.0, speedup=0.0), cfg) == 0.0


def test_invalid_positive_term_raises():
    with pytest.raises(ValueError, match="'gflops', 'speedup', 'log_speedup' or 'rank'"):
        RewardConfig(positive="time")


def test_missing_penalties_raise():
    with pytest.raises(ValueError, match=r"missing \['compile_error', 'timeout'\]"):
        RewardConfig(
            penalties={
                "format_error": -1.0,
                "forbidden": -1.0,
                "runtime_error": -1.0,
                "wrong_result": -1.0,
                "suspicious": -1.0,
            }
        )


def test_unknown_penalties_raise():
    with pytest.raises(ValueError, match=r"unknown \['ok', 'typo'\]"):
        RewardConfig(penalties={**RewardConfig().penalties, "typo": -1.0, "ok": 1.0})


def test_speedup_terms_need_the_baseline():
    no_baseline = EvalResult(status="ok", gflops=3.0, speedup=None)
    assert reward_from_result(no_baseline, RewardConfig()) == 3.0
    for positive in ("speedup", "log_speedup"):
        with pytest.raises(ValueError, match="needs the baseline timed"):
            reward_from_result(no_baseline, RewardConfig(positive=positive))


def test_config_is_hashable_and_compares_by_value():
    # Equal configs built apart are one key (the evaluation cache and lru caches rely on it),
    # with penalties given in another order too; a changed setting is another key.
    reordered = RewardConfig(penalties=dict(reversed(list(RewardConfig().penalties.items()))))
    assert {RewardConfig(): 1}[reordered] == 1 and len({RewardConfig(), reordered}) == 1
    assert (
        RewardConfig() != RewardConfig(positive="speedup")
        and len({RewardConfig(), RewardConfig(positive="speedup")}) == 2
    )


# ---- completion_text ------------------------------------------------------------------


def test_completion_text_of_str():
    assert completion_text("void dgemm() {}") == "void dgemm() {}"


def test_completion_text_of_messages():
    messages = [{"role": "assistant", "content": "```c\nint x;\n```"}]
    assert completion_text(messages) == "```c\nint x;\n```"


def test_completion_text_of_several_messages_concatenates():
    assert completion_text([{"role": "assistant", "content": "ab"}, {"role": "assistant", "content": "cd"}]) == "abcd"


def test_completion_text_of_dict():
    assert completion_text({"role": "assistant", "content": "int y;"}) == "int y;"
    assert completion_text({"role": "assistant"}) == ""


@pytest.mark.parametrize("bad", [None, 42, b"bytes", ("tuple",)])
def test_completion_text_rejects_other_types(bad):
    with pytest.raises(TypeError, match=type(bad).__name__):
        completion_text(bad)


# ---- HarnessReward (TRL contract) ----------------------------------------------------


def test_reward_fn_plain_strings_keeps_length_and_order():
    fake = FakeEvaluator({"bad": "compile_error", "evil": "forbidden"})
    fn = HarnessReward("dgemm", evaluate=fake)
    rewards = fn(["abc", "bad", "abcdefg", "evil"])
    assert rewards == [3.0, -40.0, 7.0, -100.0]
    assert all(type(r) is float for r in rewards)
    assert fake.calls == [(["abc", "bad", "abcdefg", "evil"], "dgemm")]
    assert [r.status for r in fn.last] == ["ok", "compile_error", "ok", "forbidden"]


def test_reward_fn_chat_messages():
    fake = FakeEvaluator({"slow": "timeout"})
    fn = HarnessReward("dgemm", evaluate=fake)
    batch = [[{"role": "assistant", "content": "slow"}], [{"role": "assistant", "content": "fast!"}]]
    assert fn(batch) == [-30.0, 5.0]
    assert fake.calls == [(["slow", "fast!"], "dgemm")]


def test_reward_fn_accepts_trl_keyword_arguments():
    fake = FakeEvaluator()
    fn = HarnessReward("dgemm", RewardConfig(positive="speedup"), evaluate=fake)
    rewards = fn(
        completions=["x", "yy"],
        prompts=["p1", "p2"],
        completion_ids=[[1, 2], [3]],
        trainer_state=object(),
        some_dataset_column=["a", "b"],
    )
    assert rewards == [2.0, 2.0]


def test_reward_fn_problem_column_routes_each_row():
    fake = FakeEvaluator({"v-bad": "wrong_result"})
    fn = HarnessReward("dgemm", evaluate=fake)
    texts = ["m1", "v-bad", "mm2", "vvv3", "m4"]
    problems = ["dgemm", "dgemv", "dgemm", "dgemv", "dgemm"]
    assert fn(texts, problem=problems) == [2.0, -10.0, 3.0, 4.0, 2.0]
    assert sorted(fake.calls, key=lambda c: c[1]) == [(["m1", "mm2", "m4"], "dgemm"), (["v-bad", "vvv3"], "dgemv")]
    assert fn.last_problems == problems


def test_reward_fn_problem_column_overrides_the_default():
    fake = FakeEvaluator()
    fn = HarnessReward("dgemm", evaluate=fake)
    fn(["a", "b"], problem=["dgemv", "dgemv"])
    assert fake.calls == [(["a", "b"], "dgemv")]


def test_reward_fn_empty_batch():
    fake = FakeEvaluator()
    fn = HarnessReward("dgemm", evaluate=fake)
    assert fn([]) == [] and fn.last == []


def test_reward_fn_name_names_problem_and_term():
    fn = HarnessReward("dgemv", RewardConfig(positive="log_speedup"), evaluate=FakeEvaluator())
    assert fn.__name__ == "dgemv_log_speedup"


def test_reward_fn_measures_as_its_measure_config_says():
    fake = FakeEvaluator()
    measure = MeasureConfig(n=48, threads=2, baseline=False)
    HarnessReward("dgemm", measure=measure, evaluate=fake)(["a"])
    HarnessReward("dgemm", evaluate=fake)(["b"])
    assert fake.configs == [measure, MeasureConfig()]


def test_results_are_the_verdicts_and_rewards_follow_the_reward_config():
    """One set of EvalResults, rewarded under different RewardConfigs without measuring again."""
    fake = FakeEvaluator({"bad": "runtime_error"})
    fn = HarnessReward("dgemm", evaluate=fake)
    results = fn.results(["abcd", "bad"])
    assert [r.status for r in results] == ["ok", "runtime_error"] and results[0].gflops == 4.0
    assert fake.calls == [(["abcd", "bad"], "dgemm")]
    assert [reward_from_result(r, RewardConfig(positive="speedup")) for r in results] == [2.0, -20.0]
    assert [reward_from_result(r, RewardConfig(positive="log_speedup")) for r in results] == [
        pytest.approx(math.log1p(2.0)),
        -20.0,
    ]
    assert len(fake.calls) == 1


SIMD_OMP = (EXAMPLES / "dgemv" / "examples" / "avx512_omp.c").read_text()  # openmp, simd, unrolling
NAIVE_DGEMV = (EXAMPLES / "dgemv" / "examples" / "naive.c").read_text()  # no technique


def test_permitted_column_forbids_other_techniques_without_measuring():
    fake = FakeEvaluator()
    fn = HarnessReward("dgemv", evaluate=fake)
    permitted = [["openmp"], ["openmp", "simd", "unrolling"], [], None]
    rewards = fn([SIMD_OMP, SIMD_OMP, NAIVE_DGEMV, SIMD_OMP], permitted=permitted, row=[0, 1, 2, 3], stage=[1, 1, 0, 1])
    assert [r.status for r in fn.last] == ["forbidden", "ok", "ok", "ok"]
    assert rewards[0] == -100.0 and "simd" in fn.last[0].detail
    assert fake.calls == [([SIMD_OMP, NAIVE_DGEMV, SIMD_OMP], "dgemv")]  # the forbidden one never reached it
    assert fn.last_rows == [0, 1, 2, 3] and fn.last_stages == [1, 1, 0, 1]
    assert fn.last_permitted[2] is not None and fn.last_permitted[3] is None and len(fn.last_permitted) == 4


def test_archives_receive_correct_kernels_only():
    fake = FakeEvaluator({NAIVE_DGEMV: "wrong_result", "no code at all": "format_error"})
    archives = {"dgemv": TechniqueArchive()}
    fn = HarnessReward("dgemv", archives=archives, evaluate=fake)
    fn([SIMD_OMP, NAIVE_DGEMV, "no code at all"])
    assert archives["dgemv"].stats()["cells_filled"] == 1
    assert archives["dgemv"].best(frozenset({"openmp", "simd", "unrolling"})) == float(len(SIMD_OMP))
    assert archives["dgemv"].best(frozenset()) is None


def test_mode_column_measures_each_row_in_its_execution_model():
    fake = FakeEvaluator()
    fn = HarnessReward("dot", measure=MeasureConfig(mode="openmp", threads=2), evaluate=fake)
    fn(["a", "bb", "ccc"], problem=["dot", "dot", "dgemm"], mode=["serial", "openmp", "serial"])
    calls = sorted((problem, cfg.mode, cfg.threads, texts) for (texts, problem), cfg in zip(fake.calls, fake.configs))
    assert calls == [("dgemm", "serial", 1, ["ccc"]), ("dot", "openmp", 2, ["bb"]), ("dot", "serial", 1, ["a"])]


def test_rank_reward_orders_a_group_whatever_its_scale():
    from lab.rl.reward import group_rewards

    cfg = RewardConfig(positive="rank")
    results = [
        EvalResult(status="ok", gflops=50.0, speedup=40.0),
        EvalResult(status="compile_error"),
        EvalResult(status="ok", gflops=2.0, speedup=1.5),
        EvalResult(status="wrong_result"),
        EvalResult(status="harness_error"),
        EvalResult(status="ok", gflops=0.1, speedup=0.9),  # another group: alone, so 0
    ]
    rewards = group_rewards(results, ["g"] * 5 + ["h"], cfg)
    # Within g (harness error left out): fastest ok > slower ok > wrong result (-10) > compile error (-40).
    assert rewards[:4] == [1.0, 0.0, 2 / 3, 1 / 3]
    assert rewards[4] == pytest.approx(sum(rewards[:4]) / 4)  # the harness's failure: the group's mean
    assert rewards[5] == 0.0
    # Scale-free: multiplying every speedup by 100 changes nothing.
    scaled = [
        EvalResult(status=r.status, gflops=r.gflops, speedup=r.speedup * 100 if r.speedup else None) for r in results
    ]
    assert group_rewards(scaled, ["g"] * 5 + ["h"], cfg) == rewards


def test_soft_violations_are_measured_and_their_performance_scaled():
    """Under SQD's soft rule a kernel outside its permitted set is measured like any other, earns
    violation_weight x its performance term (failures keep their penalty), and enters the archive
    under the techniques it really uses."""
    fake = FakeEvaluator({NAIVE_DGEMV: "wrong_result"})
    archives = {"dgemv": TechniqueArchive()}
    sqd = SQDConfig(violation="soft", violation_weight=0.25)
    fn = HarnessReward("dgemv", archives=archives, evaluate=fake, sqd=sqd)
    rewards = fn([SIMD_OMP, SIMD_OMP, NAIVE_DGEMV], permitted=[["openmp"], None, []], prompts=["a", "b", "c"])
    assert [r.status for r in fn.last] == ["ok", "ok", "wrong_result"]
    assert fake.calls == [([SIMD_OMP, SIMD_OMP, NAIVE_DGEMV], "dgemv")]  # the violator was measured
    assert "simd" in fn.last_violations[0] and fn.last_violations[1:] == [None, None]
    assert rewards == [pytest.approx(0.25 * len(SIMD_OMP)), float(len(SIMD_OMP)), -10.0]
    assert archives["dgemv"].best(frozenset({"openmp", "simd", "unrolling"})) == float(len(SIMD_OMP))
    # The hard rule (the default) refuses the same kernel unmeasured.
    hard = HarnessReward("dgemv", evaluate=FakeEvaluator(), sqd=SQDConfig())
    assert hard([SIMD_OMP], permitted=[["openmp"]]) == [-100.0] and hard.last[0].status == "forbidden"


def test_qd_bonus_rewards_archive_gains_only():
    """A correct kernel that fills an empty cell or beats its elite earns (1 + qd_bonus) x its term;
    the same kernel again (no gain) earns the plain term; wrong kernels never do."""
    fake = FakeEvaluator({NAIVE_DGEMV: "wrong_result"})
    fn = HarnessReward("dgemv", archives={"dgemv": TechniqueArchive()}, evaluate=fake, sqd=SQDConfig(qd_bonus=0.5))
    first = fn([SIMD_OMP, NAIVE_DGEMV], prompts=["a", "a"])
    assert fn.last_improved == [True, False]
    assert first == [pytest.approx(1.5 * len(SIMD_OMP)), -10.0]
    again = fn([SIMD_OMP], prompts=["b"])
    assert fn.last_improved == [False] and again == [float(len(SIMD_OMP))]
    # Rank rewards order by the scaled speedup: the bonus lifts a kernel that fills an empty cell
    # above an equally fast one whose cell is already held.
    rank = HarnessReward(
        "dgemv",
        RewardConfig(positive="rank"),
        archives={"dgemv": TechniqueArchive()},
        evaluate=FakeEvaluator(),
        sqd=SQDConfig(qd_bonus=0.5),
    )
    rank([NAIVE_DGEMV], prompts=["x"])
    assert rank([SIMD_OMP, NAIVE_DGEMV], prompts=["a", "a"]) == [1.0, 0.0]


def test_performance_scale_without_sqd_is_one():
    assert performance_scale("uses simd", True, None) == 1.0
    with pytest.raises(ValueError):
        SQDConfig(violation_weight=1.0)  # a soft violation must cost something
    with pytest.raises(ValueError):
        SQDConfig(qd_bonus=1.5)  # the bonus never outweighs the performance term


def test_the_compiled_object_overrides_what_the_text_hides_or_fakes():
    """A kernel whose object calls the OpenMP runtime uses OpenMP, whatever its text shows: under
    the hard rule a prompt that did not permit it makes the measured kernel forbidden. A SIMD the
    object does not show (a dead vector variable) is no technique: under the soft rule it costs
    nothing, and the archive files the kernel without it."""

    def evaluate(texts, problem, config):
        facts = {NAIVE_DGEMV: {"openmp": True, "simd": False}, SIMD_OMP: {"openmp": False, "simd": False}}
        return [EvalResult(status="ok", gflops=10.0, speedup=2.0, object_facts=facts[t]) for t in texts]

    hard = HarnessReward("dgemv", evaluate=evaluate, sqd=SQDConfig())
    assert hard([NAIVE_DGEMV], permitted=[[]]) == [-100.0]
    assert hard.last[0].status == "forbidden" and "openmp" in hard.last_violations[0]
    archives = {"dgemv": TechniqueArchive()}
    soft = HarnessReward("dgemv", archives=archives, evaluate=evaluate, sqd=SQDConfig(violation="soft"))
    # SIMD_OMP's text says openmp + simd + unrolling; its object shows neither OpenMP nor SIMD.
    assert soft([SIMD_OMP], permitted=[["unrolling"]]) == [10.0] and soft.last_violations == [None]
    assert archives["dgemv"].cells() == {"unrolling": 10.0}


def test_the_qd_bonus_does_not_depend_on_the_order_of_the_batch():
    """Copies of one kernel in a group all fill the empty cell they share, as the batch found it:
    they earn the bonus alike, so identical completions get identical rewards."""
    fn = HarnessReward(
        "dgemv", archives={"dgemv": TechniqueArchive()}, evaluate=FakeEvaluator(), sqd=SQDConfig(qd_bonus=0.5)
    )
    rewards = fn([SIMD_OMP, SIMD_OMP], prompts=["a", "a"])
    assert fn.last_improved == [True, True] and rewards[0] == rewards[1] == pytest.approx(1.5 * len(SIMD_OMP))


def test_measured_counts_the_kernels_the_harness_compiled_and_ran():
    """Refused unmeasured (the hard rule's text verdict, a format error) or never run (a compile
    error): not measured. Run, whatever the verdict (a wrong result): measured."""
    fake = FakeEvaluator({NAIVE_DGEMV: "wrong_result", "int broken;": "compile_error"})
    fn = HarnessReward("dgemv", evaluate=fake, sqd=SQDConfig())
    fn([SIMD_OMP, NAIVE_DGEMV, "int broken;", SIMD_OMP], permitted=[["openmp"], None, None, None])
    assert [r.status for r in fn.last] == ["forbidden", "wrong_result", "compile_error", "ok"]
    assert fn.last_measured == [False, True, False, True]


def test_the_batch_record_holds_each_kernels_techniques_and_reward():
    """What the training dynamics read (lab.analysis.dynamics): the techniques the reward judged each
    completion by, in registry order (the object's correction included; None without a kernel),
    and its whole reward, from a call and from the terms alike."""
    fn = HarnessReward("dgemv", evaluate=FakeEvaluator())
    rewards = fn([SIMD_OMP, "no code here", NAIVE_DGEMV], prompts=["a", "a", "a"])
    assert fn.last_rewards == rewards
    assert fn.last_techniques[1] is None and fn.last_techniques[2] == []
    assert fn.last_techniques[0] == [t for t in problem_techniques("dgemv") if t in {"simd", "openmp", "unrolling"}]
    terms = HarnessReward("dgemv", evaluate=FakeEvaluator())
    assert composed(terms, [SIMD_OMP, "no code here", NAIVE_DGEMV], prompts=["a", "a", "a"]) == terms.last_rewards
    assert terms.last_techniques == fn.last_techniques


# ---- the reward as TRL's summed terms (performance, compliance, qd_bonus) ---------------------

CORPUS = sorted(KERNELS.rglob("*.c"))  # tests/kernels/**/*.c
_PROBLEM = re.compile(r"\bproblem:\s*(\w+)")


def _corpus_problem(path) -> str:
    """The problem a corpus kernel is written for: its header's `problem:` (tests/kernels/README.md), else DGEMM."""
    m = _PROBLEM.search(path.read_text().splitlines()[0])
    return m.group(1) if m else "dgemm"


class StatusCycle:
    """A stand-in harness for the corpus: the i-th distinct text it sees gets STATUSES[i mod 9]
    (every status, no compiling), correct ones GFLOPS and a speedup that vary with the text."""

    def __init__(self):
        self.verdicts: dict[str, EvalResult] = {}
        self.calls = 0

    def __call__(self, texts, problem, config):
        self.calls += 1
        for t in texts:
            if t not in self.verdicts:
                i = len(self.verdicts)
                status = STATUSES[i % len(STATUSES)]
                self.verdicts[t] = (
                    EvalResult(status=status, gflops=0.5 + (i * 37) % 101, speedup=0.25 + (i * 13) % 17 / 4)
                    if status == "ok"
                    else EvalResult(status=status)
                )
        return [self.verdicts[t] for t in texts]


def _archives(problems) -> dict[str, TechniqueArchive]:
    """Archives as a run's earlier steps left them: each problem's technique-free cell held at 30
    GFLOPS (slower naive kernels gain nothing, faster ones improve it; every other cell is empty)."""
    archives = {}
    for p in dict.fromkeys(problems):
        archives[p] = TechniqueArchive(problem_techniques(p))
        archives[p].add(frozenset(), 30.0, "/* an earlier elite */")
    return archives


def composed(fn: HarnessReward, completions, **kwargs) -> list[float | None]:
    """What TRL makes of the terms (GRPOTrainer, sum_then_normalize): sum of weight x term, None
    (TRL: NaN, unscorable) where every term is None, a None term counting 0 otherwise."""
    columns = [term(completions, **kwargs) for term in fn.terms]
    assert [t.__name__ for t in fn.terms] == list(TERMS) and len(TERM_WEIGHTS) == len(TERMS)
    return [
        None if all(v is None for v in row) else sum(w * v for w, v in zip(TERM_WEIGHTS, row) if v is not None)
        for row in zip(*columns)
    ]


def _corpus_batch():
    texts = [p.read_text() for p in CORPUS]
    problems = [_corpus_problem(p) for p in CORPUS]
    # Permitted sets of every kind: none (no SQD prompt), nothing, one technique, all of them.
    permitted = []
    for i, p in enumerate(problems):
        techniques = list(problem_techniques(p))
        permitted.append([None, [], techniques[:1], techniques][i % 4])
    prompts = [f"prompt {i // 4}" for i in range(len(texts))]  # GRPO groups of 4
    return texts, {"problem": problems, "permitted": permitted, "prompts": prompts}


@pytest.mark.parametrize("max_at_k", [None, 3])
@pytest.mark.parametrize("harness_error", ["group_mean", -5.0])
@pytest.mark.parametrize("positive", ["gflops", "speedup", "log_speedup", "rank"])
def test_the_terms_add_up_to_todays_reward_on_the_kernel_corpus(positive, harness_error, max_at_k):
    """Every corpus kernel, under soft SQD with an archive: sum of weight x term is the reward
    HarnessReward gives today (reward_from_result with performance_scale; group_rewards for
    rank and max@k), row by row, and a harness error is None in every term under the group-mean
    rule (or its group's mean, as today, where other reward functions score the batch too)."""
    texts, columns = _corpus_batch()
    cfg = RewardConfig(positive=positive, harness_error=harness_error, rarity_bonus=0.3, max_at_k=max_at_k)
    sqd = SQDConfig(violation="soft", violation_weight=0.25, qd_bonus=0.5)
    today = HarnessReward("dgemm", cfg, archives=_archives(columns["problem"]), evaluate=StatusCycle(), sqd=sqd)
    whole = today(texts, **columns)
    fake = StatusCycle()
    fn = HarnessReward("dgemm", cfg, archives=_archives(columns["problem"]), evaluate=fake, sqd=sqd)
    summed = composed(fn, texts, **columns)
    assert fake.calls == len(set(columns["problem"]))  # one evaluation of the batch per problem, for all terms
    assert [r.status for r in fn.last] == [r.status for r in today.last]
    assert fn.last_improved == today.last_improved and fn.last_violations == today.last_violations
    # The corpus exercises every branch: each status, soft violators and archive gains among correct kernels.
    assert {r.status for r in fn.last} == set(STATUSES)
    ok = [i for i, r in enumerate(fn.last) if r.status == "ok"]
    assert any(fn.last_violations[i] for i in ok) and any(fn.last_improved[i] for i in ok)
    assert any(fn.last_violations[i] and fn.last_improved[i] for i in ok)
    assert not all(fn.last_improved[i] for i in ok)
    assert len({fn.last_rarity[i] for i in ok}) > 1  # rare sets and common ones
    unscorable = harness_error == "group_mean" or positive == "rank"
    for i, (r, total, reward) in enumerate(zip(fn.last, summed, whole)):
        if r.status == "harness_error" and unscorable:
            assert total is None  # TRL: no advantage, as the group mean gave it
            continue
        assert total == pytest.approx(reward, rel=1e-12, abs=1e-12), (CORPUS[i], r.status)
        if positive != "rank" and max_at_k is None:
            scale = performance_scale(fn.last_violations[i], fn.last_improved[i], sqd) * fn.last_rarity[i]
            assert total == pytest.approx(reward_from_result(r, cfg, scale), rel=1e-12, abs=1e-12)
    # Beside other reward functions (which would make the row scorable), a harness error gets its
    # group's mean, as today: the sum is today's reward on every row.
    beside = HarnessReward(
        "dgemm", cfg, archives=_archives(columns["problem"]), evaluate=StatusCycle(), sqd=sqd, unscored_as_none=False
    )
    assert composed(beside, texts, **columns) == pytest.approx(whole, rel=1e-12, abs=1e-12)


def test_the_terms_of_a_recorded_sqd_batch():
    """One SQD batch, term by term: a soft violator loses (1 - violation_weight) of its GFLOPS in
    `compliance`, a kernel that fills an empty cell earns qd_bonus x what it keeps in `qd_bonus`,
    failures keep their penalty, and the harness's failure is None everywhere; the sum is today's
    reward."""
    fake = FakeEvaluator({NAIVE_DGEMV + "\n": "wrong_result", "boom": "harness_error"})
    sqd = SQDConfig(violation="soft", violation_weight=0.25, qd_bonus=0.5)
    batch = [SIMD_OMP, SIMD_OMP, NAIVE_DGEMV, NAIVE_DGEMV + "\n", "boom", NAIVE_DGEMV]
    columns = {
        "permitted": [["openmp"], None, [], None, None, ["simd"]],
        "prompts": ["a", "a", "a", "b", "b", "b"],
    }

    def archives():  # the naive cell is held by a faster elite: a naive kernel gains nothing there
        archive = TechniqueArchive(problem_techniques("dgemv"))
        archive.add(frozenset(), 1000.0, "/* a fast naive elite */")
        return {"dgemv": archive}

    fn = HarnessReward("dgemv", archives=archives(), evaluate=fake, sqd=sqd)
    performance, compliance, bonus, rarity = (term(batch, **columns) for term in fn.terms)
    assert len(fake.calls) == 1
    assert [r.status for r in fn.last] == ["ok", "ok", "ok", "wrong_result", "harness_error", "ok"]
    simd, naive = float(len(SIMD_OMP)), float(len(NAIVE_DGEMV))
    assert performance == [simd, simd, naive, -10.0, None, naive]
    assert compliance == [-0.75 * simd, 0.0, 0.0, 0.0, None, 0.0]  # the naive kernel uses no technique: it complies
    assert bonus == [0.5 * 0.25 * simd, 0.5 * simd, 0.0, 0.0, None, 0.0]  # the SIMD cell was empty
    assert rarity == [0.0, 0.0, 0.0, 0.0, None, 0.0]  # no rarity bonus by default
    whole = HarnessReward("dgemv", archives=archives(), evaluate=fake, sqd=sqd)(batch, **columns)
    total = [p + c + b + q if p is not None else None for p, c, b, q in zip(performance, compliance, bonus, rarity)]
    assert total[:4] + total[5:] == whole[:4] + whole[5:]  # exactly, for these numbers
    assert total[4] is None and whole[4] == (-10.0 + naive) / 2  # today: its group's (b) mean


def test_the_terms_share_one_evaluation_per_batch():
    """TRL calls the terms one after another with the same batch: it is measured, and offered to
    the archive, once. The next step's batch is measured again even if its texts are the same."""
    fake = FakeEvaluator({"bad": "compile_error"})
    archives = {"dgemv": TechniqueArchive()}
    fn = HarnessReward("dgemv", archives=archives, evaluate=fake, sqd=SQDConfig(qd_bonus=0.5))
    first = [term([SIMD_OMP, "bad"], prompts=["p", "p"]) for term in fn.terms]
    assert len(fake.calls) == 1 and fn.last_improved == [True, False]
    assert first == [[float(len(SIMD_OMP)), -40.0], [0.0, 0.0], [0.5 * len(SIMD_OMP), 0.0], [0.0, 0.0]]
    again = [term([SIMD_OMP, "bad"], prompts=["p", "p"]) for term in fn.terms]
    assert len(fake.calls) == 2 and fn.last_improved == [False, False]  # its cell is held now
    assert again[2] == [0.0, 0.0]
    fn.terms[0](["x"], prompts=["q"])
    fn.terms[1](["y"], prompts=["q"])  # another batch than the one just scored: scored itself
    assert len(fake.calls) == 4 and fn.last_texts == ["y"]
    assert fn.seconds == fn.finished - fn.started >= 0
    with pytest.raises(ValueError, match="performance, compliance, qd_bonus, rarity"):
        fn.term("speed", ["x"])


def test_a_fixed_harness_error_reward_is_the_performance_term():
    fake = lambda texts, problem, config: [EvalResult(status="harness_error") for _ in texts]  # noqa: E731
    fn = HarnessReward("dgemm", RewardConfig(harness_error=-5.0), evaluate=fake)
    assert [term(["x"]) for term in fn.terms] == [[-5.0], [0.0], [0.0], [0.0]]
    rank = HarnessReward("dgemm", RewardConfig(positive="rank", harness_error=-5.0), evaluate=fake)
    assert [term(["x"]) for term in rank.terms] == [[None]] * 4  # rank: never ranked, as today


def test_rank_terms_are_the_steps_between_ranks():
    """Under `rank` the scales reorder a group: the compliance term is the rank a violation
    costs, the bonus term the rank an archive gain wins."""
    results = [EvalResult(status="ok", gflops=1.0, speedup=s) for s in (4.0, 3.0, 2.0)]
    sqd = SQDConfig(violation="soft", violation_weight=0.5, qd_bonus=1.0)
    terms = term_rewards(
        results, ["g"] * 3, RewardConfig(positive="rank"), ["uses simd", None, None], [False, False, True], sqd
    )
    # Unscaled 4 > 3 > 2; the violator drops to 2 (below 3, level with 2); the last row's bonus lifts it to 4.
    # A rank is a share of the group: what one row loses the others win, in the same term.
    assert terms["performance"] == [1.0, 0.5, 0.0]
    assert terms["compliance"] == [-0.75, 0.5, 0.25]
    assert terms["qd_bonus"] == [-0.25, -0.5, 0.75]
    scales = [performance_scale(v, up, sqd) for v, up in zip(["uses simd", None, None], [False, False, True])]
    today = group_rewards(results, ["g"] * 3, RewardConfig(positive="rank"), scales)
    assert [sum(t) for t in zip(*terms.values())] == pytest.approx(today) and today == [0.0, 0.5, 1.0]


def test_the_harness_error_none_path_gives_the_group_means_advantage():
    """GRPO's advantage, as TRL 1.16 computes it (sum_then_normalize): an unscorable row (all terms
    None) is left out of its group's nan-mean and gets advantage 0. The group-mean rule gave the row
    its group's mean, so the advantages relative to the group's mean are the same. (TRL itself gives
    the row no advantage in tests/test_own_model.py.)"""
    results = [
        EvalResult(status="ok", gflops=30.0),
        EvalResult(status="wrong_result"),
        EvalResult(status="harness_error"),
        EvalResult(status="ok", gflops=12.0),
        EvalResult(status="harness_error"),
    ]
    groups = ["p", "p", "p", "q", "q"]
    cfg = RewardConfig()
    today = group_rewards(results, groups, cfg)
    terms = term_rewards(results, groups, cfg)
    summed = [None if v is None else v + c + b + q for v, c, b, q in zip(*terms.values())]

    def advantages(rewards):  # rewards - nanmean of the group; NaN (None) rows -> 0
        out = []
        for g, r in zip(groups, rewards):
            scored = [x for h, x in zip(groups, rewards) if h == g and x is not None]
            out.append(0.0 if r is None else r - sum(scored) / len(scored))
        return out

    assert summed[2] is None and summed[4] is None
    assert advantages(summed) == pytest.approx(advantages(today)) == [20.0, -20.0, 0.0, 0.0, 0.0]


# ---- the rarity bonus ------------------------------------------------------------------------


def test_a_rare_technique_set_earns_more_than_a_common_one():
    """Three correct naive kernels and one correct SIMD kernel in a batch: the SIMD kernel's set
    is shared by none of the others (the full bonus), each naive one's by two of three (a third
    of it); a failure earns none. The terms still add up to the whole reward."""
    fake = FakeEvaluator({"bad": "compile_error"})
    cfg = RewardConfig(rarity_bonus=0.6)
    fn = HarnessReward("dgemv", cfg, evaluate=fake)
    batch = [NAIVE_DGEMV, NAIVE_DGEMV, NAIVE_DGEMV, SIMD_OMP, "bad"]
    whole = fn(batch, prompts=["a", "a", "b", "b", "b"])
    assert fn.last_rarity == pytest.approx([1.2, 1.2, 1.2, 1.6, 1.0])
    naive, simd = float(len(NAIVE_DGEMV)), float(len(SIMD_OMP))
    assert whole == pytest.approx([1.2 * naive, 1.2 * naive, 1.2 * naive, 1.6 * simd, -40.0])
    terms = HarnessReward("dgemv", cfg, evaluate=FakeEvaluator({"bad": "compile_error"}))
    assert composed(terms, batch, prompts=["a", "a", "b", "b", "b"]) == pytest.approx(whole)
    assert terms.terms[3](batch, prompts=["a", "a", "b", "b", "b"]) == pytest.approx(
        [0.2 * naive, 0.2 * naive, 0.2 * naive, 0.6 * simd, 0.0]
    )


def test_rarity_is_counted_per_problem_and_among_correct_kernels_only():
    ok, bad = EvalResult(status="ok", gflops=1.0), EvalResult(status="wrong_result")
    loop, simd = frozenset({"loop_reorder"}), frozenset({"simd"})
    factors = rarity_factors([ok, ok, bad, ok], [loop, simd, loop, loop], ["p", "p", "p", "q"], 1.0)
    assert factors == [2.0, 2.0, 1.0, 2.0]  # p: two correct kernels, two sets; q: alone
    assert rarity_factors([ok, ok], [loop, loop], ["p", "p"], 0.0) == [1.0, 1.0]


def test_dead_code_that_names_a_technique_earns_no_rarity_bonus():
    """The set a kernel is judged by comes from its object where the object can tell: a SIMD
    routine the kernel never calls is gone from the build, so the kernel's set is the naive
    kernels' and it earns what they earn, not the bonus of a rare set. Measured by the harness,
    with the build the object's verdict needs (an arm with a rarity bonus must ask for it)."""
    dead = NAIVE_DGEMV.replace(
        "void dgemv(",
        "#include <immintrin.h>\n"
        "static void unused(double *y) { _mm256_storeu_pd(y, _mm256_add_pd(_mm256_loadu_pd(y), _mm256_set1_pd(1.0))); }\n"
        "void dgemv(",
        1,
    )
    assert "simd" in detect(source_or_none(dead, load_problem("dgemv").signature), "dgemv")  # the text alone
    fn = HarnessReward("dgemv", RewardConfig(rarity_bonus=1.0), MeasureConfig(n=64, verify_techniques=True))
    fn([NAIVE_DGEMV, NAIVE_DGEMV, dead], prompts=["a", "a", "a"])
    assert [r.status for r in fn.last] == ["ok", "ok", "ok"], [r.detail for r in fn.last]
    assert "simd" not in fn.last_techniques[2]
    assert fn.last_rarity == [1.0, 1.0, 1.0]  # one set among the three: nothing rare
    with pytest.raises(ValueError, match="rarity_bonus needs measure.verify_techniques"):
        ExperimentConfig(name="rare", reward=RewardConfig(rarity_bonus=0.5))


def test_a_required_set_is_met_only_by_kernels_that_use_every_technique_of_it():
    """Under `ask: require` a kernel that ran and lacks one of its prompt's techniques breaks the
    prompt: forbidden under the hard rule (after it was measured: the build decides), its term
    scaled under the soft rule. A kernel that failed keeps its status; a prompt that requires
    nothing is met by any kernel inside it; permitting (the default) never asks."""
    broken = "void dgemv(int n, const double *A) { this does not compile }"
    full = ["openmp", "simd", "unrolling"]  # what SIMD_OMP uses
    texts, permitted = [SIMD_OMP, NAIVE_DGEMV, NAIVE_DGEMV, broken], [full, full, [], full]
    fake = FakeEvaluator({broken: "compile_error"})
    fn = HarnessReward("dgemv", evaluate=fake, sqd=SQDConfig(ask="require"))
    rewards = fn(texts, permitted=permitted, prompts=["a", "a", "b", "a"])
    assert [r.status for r in fn.last] == ["ok", "forbidden", "ok", "compile_error"]
    assert fn.last[1].detail == "code lacks unrolling, simd, openmp, which the prompt required"
    assert fake.calls == [(texts, "dgemv")]  # every kernel was built: the requirement is judged after
    assert rewards[1] == -100.0 and rewards[0] == float(len(SIMD_OMP))
    soft = HarnessReward(
        "dgemv", evaluate=FakeEvaluator(), sqd=SQDConfig(ask="require", violation="soft", violation_weight=0.25)
    )
    assert soft([NAIVE_DGEMV], permitted=[["simd"]]) == [pytest.approx(0.25 * len(NAIVE_DGEMV))]
    assert "lacks simd" in soft.last_violations[0]
    permit = HarnessReward("dgemv", evaluate=FakeEvaluator(), sqd=SQDConfig())
    assert permit([NAIVE_DGEMV], permitted=[full]) == [float(len(NAIVE_DGEMV))]


def test_dead_code_does_not_meet_a_simd_requirement_and_a_real_vector_loop_does():
    """Measured by the harness with the object check: a naive dgemv that carries an unused AVX
    routine names SIMD in its text, but its object has no packed arithmetic, so a prompt that
    requires SIMD is not met; the same kernel whose loop uses the routine meets it."""
    dead = NAIVE_DGEMV.replace(
        "void dgemv(",
        "#include <immintrin.h>\n"
        "static void unused(double *y) { _mm256_storeu_pd(y, _mm256_add_pd(_mm256_loadu_pd(y), _mm256_set1_pd(1.0))); }\n"
        "void dgemv(",
        1,
    )
    vector = """#include <immintrin.h>
void dgemv(int n, const double *A, const double *x, double *y) {
    for (int i = 0; i < n; i++) {
        __m256d acc = _mm256_setzero_pd();
        int j = 0;
        for (; j + 4 <= n; j += 4)
            acc = _mm256_add_pd(acc, _mm256_mul_pd(_mm256_loadu_pd(A + (long)i * n + j), _mm256_loadu_pd(x + j)));
        double lanes[4];
        _mm256_storeu_pd(lanes, acc);
        double s = lanes[0] + lanes[1] + lanes[2] + lanes[3];
        for (; j < n; j++) s += A[(long)i * n + j] * x[j];
        y[i] = s;
    }
}
"""
    assert load_problem("dgemv").signature in vector
    fn = HarnessReward(
        "dgemv", measure=MeasureConfig(n=64, verify_techniques=True), sqd=SQDConfig(ask="require", violation="soft")
    )
    fn([dead, vector], permitted=[["simd"], ["simd"]], prompts=["a", "a"])
    assert [r.status for r in fn.last] == ["ok", "ok"], [r.detail for r in fn.last]
    assert fn.last_violations == ["lacks simd, which the prompt required", None]
    assert "simd" not in fn.last_techniques[0] and "simd" in fn.last_techniques[1]
    with pytest.raises(ValueError, match="ask: require needs measure.verify_techniques"):
        ExperimentConfig(name="asked", kind="grpo", sqd=SQDConfig(ask="require"))


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_max_at_k_is_each_rows_share_of_the_best_of_k_subsets_that_hold_it(k):
    """Against enumeration of every k-subset: row i's value is n/k x the sum of the best of the
    subsets holding i over C(n, k), ties included; the mean is the expected best of k."""
    import itertools
    import random

    rng = random.Random(k)
    values = [rng.choice([-100.0, -10.0, 1.0, 27.9, 27.9, 54.0]) + rng.random() * (i % 2) for i in range(8)]
    subsets = list(itertools.combinations(range(8), k))
    expected = [8 / k * sum(max(values[j] for j in s) for s in subsets if i in s) / len(subsets) for i in range(8)]
    assert max_at_k(values, k) == pytest.approx(expected, rel=1e-12)
    best_of_k = sum(max(values[j] for j in s) for s in subsets) / len(subsets)
    assert sum(max_at_k(values, k)) / 8 == pytest.approx(best_of_k, rel=1e-12)


def test_max_at_k_transforms_each_group_alone_and_stops_reinforcing_the_sure_loop():
    """A group of three failed attempts, four loop kernels and one fast kernel. The plain reward
    pushes the loop up (above the group's mean); under max@4 the best of four is what counts,
    so only the fast kernel is above the mean, and a failed attempt costs no more than a loop
    kernel in a group that found the fast one. Another group is transformed on its own (k above
    its size is its size), and a harness error still gets its group's mean."""
    fail, loop, fast = (
        EvalResult(status="wrong_result"),
        EvalResult(status="ok", gflops=28.0),
        EvalResult(status="ok", gflops=54.0),
    )
    results = [fail] * 3 + [loop] * 4 + [fast] + [fail, loop, EvalResult(status="harness_error")]
    groups = ["a"] * 8 + ["b"] * 3
    plain = group_rewards(results, groups, RewardConfig())
    best = group_rewards(results, groups, RewardConfig(max_at_k=4))
    mean_plain, mean_best = sum(plain[:8]) / 8, sum(best[:8]) / 8
    assert plain[3] > mean_plain and plain[7] > mean_plain  # plain: the loop is reinforced too
    assert best[3] < mean_best < best[7]  # max@4: only the fast kernel is
    assert best[0] == pytest.approx(best[3]) == pytest.approx(2 * (15 * 54.0 + 20 * 28.0) / 70)
    assert best[7] == pytest.approx(54.0)
    assert best[8:10] == max_at_k([-10.0, 28.0], 4) == [28.0, 28.0]
    assert best[10] == pytest.approx(28.0)
    with pytest.raises(ValueError, match="at most train.group_size"):
        ExperimentConfig(name="k", kind="grpo", reward=RewardConfig(max_at_k=16))


def test_max_at_k_lasts_for_max_at_k_steps_then_the_plain_reward_applies():
    """TRL hands reward functions its trainer state: before step `max_at_k_steps` (0-based) a
    batch's terms are max@k's, from it on the plain reward's; outside training, max@k's."""
    from types import SimpleNamespace

    statuses = {"x": "wrong_result"}
    texts, prompts = ["x", "abcd", "abcd", "abcdefgh"], ["p"] * 4
    results = [FakeEvaluator(statuses)([t], "dgemm", None)[0] for t in texts]
    cfg = RewardConfig(max_at_k=2, max_at_k_steps=3)
    fn = HarnessReward("dgemm", cfg, evaluate=FakeEvaluator(statuses))

    def performance(step):
        state = None if step is None else SimpleNamespace(global_step=step)
        return fn.term("performance", texts, prompts=prompts, trainer_state=state)

    best, plain = (
        group_rewards(results, prompts, RewardConfig(max_at_k=2)),
        group_rewards(results, prompts, RewardConfig()),
    )
    assert best != plain
    assert performance(0) == pytest.approx(best) and performance(2) == pytest.approx(best)
    assert performance(3) == pytest.approx(plain) and performance(40) == pytest.approx(plain)
    assert performance(None) == pytest.approx(best)
    assert cfg.at_step(3) == RewardConfig() and RewardConfig(max_at_k=2).at_step(10**6).max_at_k == 2
    with pytest.raises(ValueError, match="set reward.max_at_k too"):
        RewardConfig(max_at_k_steps=3)
