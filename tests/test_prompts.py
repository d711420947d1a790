"""lab.policy.prompts: the execution model stated in a problem's prompt."""

from __future__ import annotations

import pytest

from lab.harness.problems import list_problems, load_problem
from lab.policy.prompts import prompt_text, prompt_texts
from tests.conftest import ROOT


@pytest.mark.parametrize("problem", list_problems())
def test_serial_prompt_takes_out_openmp(problem):
    text = prompt_text(problem, mode="serial")
    body, _, sentence = text.rpartition("\n\n")
    assert "OpenMP" not in body and "omp.h" not in body
    assert sentence.startswith("Execution model: serial.")
    assert "Execution model: OpenMP" in prompt_text(problem, mode="openmp", threads=2)
    assert prompt_text(problem) == load_problem(problem).prompt  # no mode: the problem's text as it is


# --- training and held-out phrasings ---------------------------------------------------------


def _body(prompt: str) -> str:
    """A prompt without the sentences the lab appends (execution model, permitted techniques)."""
    return prompt.split("\n\nExecution model:")[0].split("\n\nPermitted optimization techniques:")[0]


@pytest.mark.parametrize("problem", list_problems())
def test_every_problem_has_four_training_and_four_held_out_phrasings(problem):
    p = load_problem(problem)
    assert len(p.train_prompts) >= 4 and len(p.eval_prompts) >= 4
    for split in ("train", "eval"):
        for mode in (None, "serial", "openmp"):
            texts = prompt_texts(problem, split, mode)
            assert len(set(texts)) == len(texts)
            for text in texts:
                assert f"{p.signature};" in text and "```c" in text
                if mode == "serial":
                    assert "OpenMP" not in _body(text) and "omp.h" not in _body(text)
                else:
                    assert "omp.h" in _body(text)
    train = {" ".join(t.split()) for t in prompt_texts(problem, "train", "openmp")}
    assert not train & {" ".join(t.split()) for t in prompt_texts(problem, "eval", "openmp")}


def test_phrasing_numbers_wrap_and_splits_are_checked():
    texts = prompt_texts("dot", "train")
    count = len(load_problem("dot").train_prompts)
    assert len(set(texts)) == count >= 4  # each number its own phrasing, up to their count
    for i in range(count):
        assert prompt_text("dot", phrasing=i + count) == prompt_text("dot", phrasing=i - count) == texts[i]
    assert prompt_text("dot", phrasing=1, split="eval") != prompt_text("dot", phrasing=1)
    with pytest.raises(ValueError, match="unknown prompt split"):
        prompt_text("dot", split="test")


SIG = "void f(int n, double *x)"


@pytest.mark.parametrize(
    "splits, message",
    [
        ({"train": [], "eval": ["    void f(int n, double *x);"]}, "train_prompts: list at least one"),
        (
            {"train": ["Write    void f(int n, double *x);"], "eval": ["write  void f(int n,   double *x);"]},
            "also a training",
        ),
        ({"train": ["Write f."], "eval": [f"{SIG};"]}, r"train_prompts\[0\]: does not state the signature"),
        ({"train": [f"{SIG}; Use OpenMP."], "eval": [f"{SIG};"]}, "mentions OpenMP outside"),
        ({"train": [f"{SIG}; include omp.h"], "eval": [f"{SIG};"]}, "mentions OpenMP outside"),
        ({"train": [f"{SIG};{{openmp: a {{b}} }}"], "eval": [f"{SIG};"]}, "unbalanced or unknown"),
        ({"train": [f"{SIG};{{serial: x}}"], "eval": [f"{SIG};"]}, "unbalanced or unknown"),
        ({"train": [f"{SIG}; A", f"{SIG};  a"], "eval": [f"{SIG};"]}, "repeated"),
        ({"train": [f"{SIG}; on x86-64 with AVX-512"], "eval": [f"{SIG};"]}, "does not name the target"),
    ],
)
def test_bad_phrasings_are_refused_in_one_line(splits, message):
    from lab.harness.problems import BadProblem, _check_phrasings

    # Every phrasing names the target, but that of the case about it.
    slots = "" if message == "does not name the target" else " For a {arch} CPU with {isa}."
    splits = {split: [text + slots for text in texts] for split, texts in splits.items()}

    with pytest.raises(BadProblem, match=message) as err:
        _check_phrasings("p/problem.toml", SIG, splits)
    assert "\n" not in str(err.value) and str(err.value).startswith("p/problem.toml: ")


def test_words_that_merely_contain_omp_are_not_openmp():
    from lab.harness.problems import BadProblem, _check_phrasings

    cpu = " For a {arch} CPU with {isa}."
    train, held_out = f"{SIG}; a compressed sum{cpu}", f"It: {SIG};{cpu}"
    assert _check_phrasings("p.toml", SIG, {"train": [train], "eval": [held_out]}) is None
    # The word itself, or a runtime call, is refused: the check is by word, not by letters.
    for text in (f"{SIG}; as omp would{cpu}", f"{SIG}; time it with omp_get_wtime(){cpu}"):
        with pytest.raises(BadProblem, match="mentions OpenMP outside"):
            _check_phrasings("p.toml", SIG, {"train": [text], "eval": [held_out]})


def test_a_config_naming_a_problem_with_overlapping_phrasings_is_refused(monkeypatch, tmp_path):
    from lab import results as experiments
    from lab.config import ConfigError
    from lab.harness.problems import BadProblem

    def bad(name):
        raise BadProblem(
            f"harness/{name}/problem.toml: eval_prompts[0] is also a training phrasing; held-out prompts must differ"
        )

    monkeypatch.setattr(experiments, "load_problem", bad)
    config = tmp_path / "c.yaml"
    config.write_text("defaults: " + str(ROOT / "configs" / "default.yaml") + "\n")
    with pytest.raises(
        ConfigError, match=r"c.yaml: experiments.baseline: harness/dgemm/problem.toml: eval_prompts\[0\]"
    ):
        experiments.open_config(config)


def test_training_never_shows_a_held_out_phrasing():
    from lab.config import load_config
    from lab.policy.seed_policy.corpus import make_corpus
    from lab.rl.sqd import SQDSchedule
    from lab.rl.train import suite_rows

    held_out = {
        _body(t) for p in list_problems() for m in (None, "serial", "openmp") for t in prompt_texts(p, "eval", m)
    }
    train = {
        _body(t) for p in list_problems() for m in (None, "serial", "openmp") for t in prompt_texts(p, "train", m, 4)
    }
    train |= {_body(t) for p in list_problems() for m in ("openmp",) for t in prompt_texts(p, "train", m, 1)}
    corpus = [_body(e.prompt) for e in make_corpus(400, seed=3)]
    assert not set(corpus) & held_out and len(set(corpus)) > 100  # varied wording, none held out
    # Recombined prompts are made of training sentences: no sentence only a held-out phrasing has.
    from lab.policy.seed_policy.wording import units

    for p in list_problems():
        train_units = {u for t in prompt_texts(p, "train", "openmp") for u in units(t)[1]}
        only_held_out = {u for t in prompt_texts(p, "eval", "openmp") for u in units(t)[1]} - train_units
        assert not [u for u in only_held_out if len(u.split()) >= 6 and any(u in b for b in corpus)]
    suite = load_config(ROOT / "configs" / "suite.yaml").experiment("grpo")
    rows = [_body(r["prompt"][0]["content"]) for r in suite_rows(suite)]
    assert all(b in train for b in rows) and len(set(rows)) > 4
    schedule = SQDSchedule(
        ["dgemm"], suite.sqd or load_config(ROOT / "configs" / "default.yaml").experiment("grpo_sqd").sqd
    )
    stream = schedule.rows()
    sqd = [_body(next(stream)["prompt"][0]["content"]) for _ in range(8)]
    assert all(b in train for b in sqd) and len(set(sqd)) == 4


def test_reworded_training_prompts_vary_and_never_show_a_held_out_sentence():
    import dataclasses
    import json

    from lab.config import load_config
    from lab.policy.prompts import permitted_in
    from lab.policy.seed_policy.wording import units
    from lab.rl.sqd import TechniqueArchive
    from lab.rl.train import _dataset, sqd_schedule, suite_rows
    from lab.techniques import problem_techniques

    default = load_config(ROOT / "configs" / "default.yaml").experiment("grpo")
    suite = load_config(ROOT / "configs" / "suite.yaml").experiment("grpo")

    def reworded(config, seed=0, reword=True):
        return dataclasses.replace(config, seed=seed, train=dataclasses.replace(config.train, reword=reword))

    single = [_body(r["prompt"][0]["content"]) for r in _dataset(reworded(default), None)]
    mixed = [(r["problem"], r["mode"], _body(r["prompt"][0]["content"])) for r in suite_rows(reworded(suite))]
    assert len(single) == default.train.steps * default.train.prompts_per_step and len(set(single)) > len(single) // 2
    assert [_body(r["prompt"][0]["content"]) for r in _dataset(reworded(default), None)] == single  # seeded
    assert [_body(r["prompt"][0]["content"]) for r in _dataset(reworded(default, 1), None)] != single
    for problem, mode, body in [("dgemm", default.measure.mode, b) for b in single] + mixed:
        train_units = {u for t in prompt_texts(problem, "train", mode) for u in units(t)[1]}
        held_out_units = {u for t in prompt_texts(problem, "eval", mode) for u in units(t)[1]} - train_units
        assert load_problem(problem).signature in body  # the request itself is always there
        assert body not in {_body(t) for t in prompt_texts(problem, "eval", mode)}
        assert not [u for u in held_out_units if len(u.split()) >= 6 and u in body]
    # With SQD, the schedule training builds (sqd_schedule) words its prompts the same way, each
    # in its entry's mode and with its techniques sentence, drawing the same permitted sets as
    # without rewording; a resumed stream words its rows as the killed one would have.
    default_sqd = load_config(ROOT / "configs" / "default.yaml").experiment("grpo_sqd")
    for cfg in (default_sqd, dataclasses.replace(suite, sqd=default_sqd.sqd)):
        cfg = reworded(cfg, seed=3)  # accepted with sqd
        archives = {p: TechniqueArchive(problem_techniques(p)) for p in dict.fromkeys(e.problem for e in cfg.entries)}
        plain_archives = {p: TechniqueArchive(problem_techniques(p)) for p in archives}
        a, plain = sqd_schedule(cfg, archives), sqd_schedule(reworded(cfg, seed=3, reword=False), plain_archives)
        stream, plain_stream = a.rows(), plain.rows()
        first = [next(stream) for _ in range(32)]
        assert [r["permitted"] for r in first] == [next(plain_stream)["permitted"] for _ in range(32)]
        texts = [r["prompt"][0]["content"] for r in first]
        bodies = [_body(t) for t in texts]
        rows = [(r["problem"], r.get("mode", cfg.measure.mode), b) for r, b in zip(first, bodies)]
        assert len(set(bodies)) > 8 and any(
            b not in {_body(t) for t in prompt_texts(p, "train", m)} for p, m, b in rows
        )
        for (problem, mode, body), text, row in zip(rows, texts, first):
            train_units = {u for t in prompt_texts(problem, "train", mode) for u in units(t)[1]}
            held_out_units = {u for t in prompt_texts(problem, "eval", mode) for u in units(t)[1]} - train_units
            assert load_problem(problem).signature in body
            assert body not in {_body(t) for t in prompt_texts(problem, "eval", mode)}
            assert not [u for u in held_out_units if len(u.split()) >= 6 and u in body]
            assert f"Execution model: {'serial' if mode == 'serial' else 'OpenMP'}" in text
            assert mode != "serial" or "OpenMP" not in body  # a serial prompt never offers it
            assert sorted(permitted_in(text)) == sorted(row["permitted"])
        a.end_step(1, trained_rows=[r["row"] for r in first[:16]])
        twin = sqd_schedule(cfg, {p: TechniqueArchive(problem_techniques(p)) for p in archives})
        twin.load_state_dict(json.loads(json.dumps(a.state_dict())))
        resumed = twin.rows()
        assert [next(resumed) for _ in range(24)] == first[16:] + [next(stream) for _ in range(8)]  # pending first


def test_restricted_evaluation_asks_every_held_out_phrasing():
    from lab.config import SuiteEntry
    from lab.pipeline.runner import _generation_calls

    entry = SuiteEntry(problem="dgemm", mode="serial")
    calls = _generation_calls(entry, seed=0, num=8, restricted=True, phrasings=4)
    assert sum(count for _, _, count in calls) == 8
    assert {first for _, first, _ in calls} == {0, 1, 2, 3}
    assert _generation_calls(entry, seed=0, num=8, restricted=False, phrasings=4) == [(None, 0, 8)]


def test_restricted_evaluation_reaches_every_phrasing_with_few_prompts_per_seed():
    from lab.config import SuiteEntry
    from lab.pipeline.runner import _generation_calls

    entry = SuiteEntry(problem="dgemv", mode="openmp")
    asked = {seed: {first for _, first, _ in _generation_calls(entry, seed, 2, True, 4)} for seed in (0, 1)}
    assert asked == {0: {0, 1}, 1: {2, 3}}  # each seed goes on where the previous one stopped
