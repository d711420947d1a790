"""Provenance instead of freezing: what keeps a result current, what stales it, and where each
machine's results go (lab.provenance, lab.pipeline.reuse, lab.results, lab status)."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from lab import provenance
from lab.config import ExperimentConfig, load_config, non_default_settings
from lab.files import write_json
from lab.harness import target
from lab.harness.machine import machine_class
from lab.pipeline import reuse
from lab.pipeline.runner import is_complete
from lab.results import MACHINES, machine_results_dir, open_config
from tests.conftest import ROOT

SRC = ROOT / "src" / "lab"


@pytest.fixture
def tree(tmp_path):
    """A copy of the lab package and the C harness whose measurement version a test may change."""
    shutil.copytree(SRC, tmp_path / "lab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "harness", tmp_path / "harness")
    return tmp_path


def _version(tree: Path) -> str:
    return provenance.compute_measurement_version(tree / "lab", tree / "harness")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path} no longer holds {old!r}: pick another line to edit"
    path.write_text(text.replace(old, new, 1))


def test_the_checkout_version_is_the_copy_version(tree):
    assert _version(tree) == provenance.measurement_version()


def test_docstrings_comments_and_blank_lines_keep_the_version(tree):
    before = _version(tree)
    evaluate = tree / "lab" / "harness" / "evaluate.py"
    text = evaluate.read_text()
    # A reflowed module docstring, a new comment, a blank line, a function docstring reworded.
    head, rest = text.split('"""', 2)[1], text.split('"""', 2)[2]
    evaluate.write_text(
        '"""' + head.replace("\n", " \n").replace(". ", ".\n") + '"""' + rest.replace("\n\n\n", "\n\n\n# why\n\n", 1)
    )
    _edit(
        tree / "lab" / "harness" / "machine.py",
        "equal on machines that measure alike",
        "equal where machines measure alike",
    )
    _edit(tree / "harness" / "bench.h", "\n#include", "\n/* a new comment,\n   over two lines */\n\n#include   ")
    _edit(tree / "harness" / "dgemm" / "problem.toml", "\n", "\n# a comment\n")
    (tree / "harness" / "dgemm" / "examples" / "another_example.c").write_text("void x(void) {}\n")
    (tree / "harness" / "README.md").write_text("reworded\n")
    assert _version(tree) == before


@pytest.mark.parametrize(
    "where, old, new",
    [
        # The timed path: the driver's shared code, the problem's spec, the evaluator, the reward.
        ("harness/bench.h", "#include", "#include <stddef.h>\n#include"),
        ("harness/dgemm/problem.toml", "\n", '\nnew_key = "changes the spec"\n'),
        ("lab/harness/evaluate.py", "\ndef evaluate(", "\nTIMED = 1\n\n\ndef evaluate("),
        ("lab/rl/reward.py", "import math", "import math\nimport cmath"),
        ("lab/pipeline/runner.py", "import random", "import random\nimport string"),
    ],
)
def test_a_change_on_a_measuring_path_stales_results(tree, where, old, new):
    before = _version(tree)
    _edit(tree / where, old, new)
    assert _version(tree) != before


def test_code_outside_the_measuring_paths_keeps_the_version(tree):
    before = _version(tree)
    for module in ("analysis/plots.py", "cli.py", "bench/bench_harness.py", "pipeline/status.py"):
        with open(tree / "lab" / module, "a") as f:
            f.write("\n\ndef _added_later():\n    return 1\n")
    assert _version(tree) == before


def test_a_docstring_added_or_removed_keeps_the_version(tree):
    before = _version(tree)
    _edit(tree / "lab" / "rl" / "sqd.py", "\ndef ", "\ndef _later():\n    return 1\n\n\ndef ")
    with_function = _version(tree)
    assert with_function != before  # a new function is code
    _edit(tree / "lab" / "rl" / "sqd.py", "def _later():\n", 'def _later():\n    """Now documented."""\n')
    assert _version(tree) == with_function


def test_config_fields_are_values_but_config_methods_are_code(tree):
    before = _version(tree)
    config = tree / "lab" / "config.py"
    _edit(
        config,
        "    threads_per_eval: PositiveInt | None = None",
        "    threads_per_eval: PositiveInt | None = None\n    later: int = 0",
    )
    assert _version(tree) == before  # a new field: compared as a value, at its default nothing
    _edit(
        config,
        "    def slot_threads(self, threads: int) -> int:\n",
        "    def slot_threads(self, threads: int) -> int:\n        threads += 0\n",
    )
    assert _version(tree) != before  # how many CPUs an evaluation holds is behaviour


def test_every_module_the_runner_imports_is_measured_or_named_as_not(tmp_path):
    """MEASURED and NOT_MEASURED cover the runner's whole import closure within the lab, so a
    new module on the measuring path cannot slip out of the version."""
    import grimp

    graph = grimp.build_graph("lab")
    closure = graph.find_upstream_modules("lab.pipeline.runner") | {"lab.pipeline.runner"}
    covered = (*provenance.MEASURED, *provenance.NOT_MEASURED)
    for module in sorted(closure):
        rel = module.removeprefix("lab.").replace(".", "/")
        measured = any(rel.startswith(c.rstrip("/") + "/") or rel == c for c in provenance.MEASURED)
        # A package outside the measured folders: its __init__ may hold only a docstring.
        if ((SRC / rel).is_dir() and not measured) or module == "lab":
            init = ast.parse(((SRC / rel) if module != "lab" else SRC).joinpath("__init__.py").read_text())
            assert all(isinstance(node, ast.Expr) for node in init.body), f"{module}/__init__.py holds code"
            continue
        assert any(rel == c.removesuffix(".py") or rel.startswith(c.rstrip("/") + "/") for c in covered), module


def test_a_new_field_at_its_default_changes_no_config():
    cfg = load_config(ROOT / "configs" / "default.yaml").experiment("grpo")
    saved = cfg.to_dict()
    del saved["train"]["report_to"]  # a result written before the field existed
    saved["train"]["learning_rate"] = cfg.train.learning_rate
    assert reuse.config_differences(saved, cfg) == []
    changed = json.loads(json.dumps(saved))
    changed["train"]["learning_rate"] = 1e-5
    assert reuse.config_differences(changed, cfg) == ["train.learning_rate"]
    # What describes the run is never compared.
    assert reuse.config_differences({**saved, "results_dir": "elsewhere", "git_commit": "0" * 40}, cfg) == []
    assert "train.steps" not in non_default_settings(ExperimentConfig().to_dict())


def _finished(cfg: ExperimentConfig, **facts) -> None:
    """A finished arm as the runner leaves it, with its provenance changed by `facts`."""
    write_json(cfg.out_dir / "config.json", {**cfg.to_dict(), **reuse.provenance(cfg), **facts})
    write_json(cfg.out_dir / "metrics.json", {"complete": True})


def test_reuse_follows_code_machine_policy_and_config(tmp_path):
    cfg = ExperimentConfig(name="arm", results_dir=str(tmp_path), model=str(tmp_path / "policy"))
    _finished(cfg)
    assert (
        is_complete(cfg)
        and reuse.judge(json.loads((cfg.out_dir / "config.json").read_text()), cfg)["state"] == "current"
    )
    _finished(cfg, git_commit="0" * 40, dirty=True)  # another commit (committing results moves HEAD): still current
    assert is_complete(cfg)
    _finished(cfg, measurement="0" * 16)
    assert not is_complete(cfg)
    saved = json.loads((cfg.out_dir / "config.json").read_text())
    assert reuse.judge(saved, cfg)["state"] == "older_code"
    _finished(cfg, machine_class="another-machine")
    assert (
        not is_complete(cfg)
        and reuse.judge(json.loads((cfg.out_dir / "config.json").read_text()))["state"] == "other_machine"
    )
    # The policy: weights on disk now differ from those that made the result.
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "model.safetensors").write_bytes(b"weights one")
    _finished(cfg)
    assert is_complete(cfg)
    (tmp_path / "policy" / "model.safetensors").write_bytes(b"weights two, longer")
    assert not is_complete(cfg)
    # A setting changed: never reused, whatever the provenance says.
    _finished(cfg)
    assert not is_complete(ExperimentConfig(name="arm", results_dir=str(tmp_path), model=cfg.model, seeds=[0]))


def test_a_cluster_result_is_judged_by_the_class_of_the_workers_that_would_measure_now(tmp_path, monkeypatch):
    from lab.harness import cluster

    class Scheduler:  # what connecting to a scheduler tells: the class its workers measure on
        workers = "cluster-class-a"

        def cluster_machine(self):
            return self.workers

    scheduler = Scheduler()
    monkeypatch.setattr(cluster, "connect", lambda address, probe, evaluator: scheduler)
    cfg = ExperimentConfig(
        name="arm", results_dir=str(tmp_path), compute={"backend": "dask", "address": "tcp://head:8786"}
    )
    _finished(cfg, machine_class="cluster-class-a")
    saved = json.loads((cfg.out_dir / "config.json").read_text())
    assert reuse.judge(saved, cfg)["state"] == "current"
    scheduler.workers = "cluster-class-b"  # the same address now serves other machines
    verdict = reuse.judge(saved, cfg)
    assert verdict["state"] == "other_machine" and "cluster-class-b" in verdict["reason"]
    assert not is_complete(cfg)


def test_a_policy_not_on_disk_is_said_not_hidden(tmp_path):
    cfg = ExperimentConfig(name="arm", results_dir=str(tmp_path), model=str(tmp_path / "not-built"))
    _finished(cfg, policy_sha256="f" * 64)
    verdict = reuse.judge(json.loads((cfg.out_dir / "config.json").read_text()), cfg)
    assert verdict["state"] == "current" and "not compared" in verdict["reason"]


def test_a_result_without_a_measurement_version_is_older_code():
    saved = {
        **ExperimentConfig().to_dict(),
        "code": "x",
        "git_commit": "abc",
        "machine": {"fingerprint": machine_class()},
    }
    verdict = reuse.judge(saved)
    assert verdict["state"] == "older_code" and "abc" in verdict["reason"]


def test_each_machine_class_writes_its_own_results_folder(tmp_path, monkeypatch):
    results = tmp_path / "results"
    assert machine_results_dir(results) == results  # nobody's yet: this machine's
    write_json(results / "machine.json", {"fingerprint": machine_class()})
    assert machine_results_dir(results) == results
    write_json(results / "machine.json", {"fingerprint": "committed-one"})
    mine = results / MACHINES / machine_class()
    assert machine_results_dir(results) == mine and machine_results_dir(mine) == mine
    # A study's folder inside the committed results is the committed machine's too.
    assert machine_results_dir(results / "sqd_study" / "dgemm") == mine / "sqd_study" / "dgemm"
    from lab.results import machine_path

    assert machine_path(results / "sqd_study.json") == mine / "sqd_study.json"
    assert machine_path(mine / "machine.json") == mine / "machine.json"
    (tmp_path / "pyproject.toml").write_text("")
    config = tmp_path / "c.yaml"
    config.write_text(
        f"results_dir: {results}\nfigures_dir: {results / 'figures'}\nexperiments:\n  baseline: {{kind: baseline}}\n"
    )
    monkeypatch.chdir(tmp_path)
    opened = open_config(config)
    assert Path(opened.results_dir) == mine and Path(opened.figures_dir) == mine / "figures"
    assert opened.experiments["baseline"].out_dir == mine / "baseline"
    # The committed machine's own folder, asked by name, is read where it is.
    assert Path(open_config(config, machine="committed-one").results_dir) == results


def test_lab_status_lists_every_result_with_its_state(tmp_path, capsys):
    from lab.cli import main

    results = tmp_path / "results"
    here = ExperimentConfig(name="mine", results_dir=str(results))
    _finished(here)
    _finished(ExperimentConfig(name="old", results_dir=str(results)), measurement="0" * 16, git_commit="f" * 40)
    _finished(ExperimentConfig(name="theirs", results_dir=str(results)), machine_class="zen3-box")
    _finished(
        ExperimentConfig(name="forced", results_dir=str(results)),
        machine_class="zen4-box-avx2",
        target=None,
        machine={},
    )
    write_json(results / "autotune.json", {"machine": {"fingerprint": machine_class()}, "best": 1.0})
    write_json(results / "figures.json", {"no": "machine"})  # not a measured result: not listed
    assert main(["status", "--results", str(results), "--json"]) == 0
    rows = {Path(r["path"]).name: r for r in json.loads(capsys.readouterr().out)}
    assert {name: r["state"] for name, r in rows.items()} == {
        "mine": "current",
        "old": "older_code",
        "theirs": "other_machine",
        "forced": "other_machine",
        "autotune.json": "older_code",  # written before reports recorded their provenance
    }
    for row in rows.values():
        assert {"code", "commit", "machine", "target", "seed_policy", "state"} <= set(row)
    # The tier: recorded with the result, or named by a forced class; unknown for older files.
    assert rows["mine"]["target"] == target.current() and rows["forced"]["target"] == "avx2"
    assert rows["autotune.json"]["target"] is None
    assert rows["old"]["commit"] == "f" * 40
    assert main(["status", "--results", str(results), "--stale", str(results / "autotune.json")]) == 0
    assert capsys.readouterr().out.split() == [str(results / "autotune.json")]
    assert main(["status", "--results", str(results)]) == 0
    assert "1 current, 2 older_code, 2 other_machine" in capsys.readouterr().out


def test_every_committed_result_has_a_state():
    from lab.pipeline.status import result_status

    rows = result_status(ROOT / "results", ROOT)
    assert rows and {r["state"] for r in rows} <= set(reuse.STATES)
    arms = {r["path"] for r in rows if r["kind"] == "arm"}
    assert {"results/baseline", "results/grpo", "results/grpo_sqd", "results/grpo_rft"} <= arms


def test_figures_name_the_machine_of_the_results_folder_they_are_in(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from lab.analysis import plots

    assert plots.machine_label(tmp_path / "figures" / "x.png") is None  # in no results folder
    figures = tmp_path / "results" / "machines" / "abc" / "figures"
    assert plots.machine_label(figures / "x.png") == "measured on (machine abc)"  # a machine's folder, uncalibrated
    write_json(figures.parent / "machine.json", {"fingerprint": "abc", "cpu_model": "Some CPU", "cores": 2})
    assert plots.machine_label(figures / "x.png") == "measured on Some CPU, 2 cores (machine abc)"
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    texts, close = [], plt.close
    monkeypatch.setattr(plots.plt, "close", lambda f: texts.extend(t.get_text() for t in f.texts) or close(f))
    plots._save(fig, figures / "x.png")
    assert texts == ["measured on Some CPU, 2 cores (machine abc)"]
