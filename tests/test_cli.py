"""The `lab` command line: exact interface of run, score, score-batch, exit codes."""

from __future__ import annotations

import json

import pytest
import yaml

from lab.config import ExperimentConfig
from tests.conftest import CPU_AVX512, EXAMPLES, KERNELS, run_lab

NAIVE = EXAMPLES / "dgemm" / "examples" / "naive.c"
FAST_FLAGS = ["--n", "96"]


def test_score_json_last_line_is_the_result():
    out = run_lab("score", str(NAIVE), "--problem", "dgemm", *FAST_FLAGS, "--json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout.strip().splitlines()[-1])
    for key in (
        "status",
        "reward",
        "gflops",
        "baseline_gflops",
        "speedup",
        "time_s",
        "detail",
        "host",
        "machine",
        "isolation",
    ):
        assert key in record
    assert record["status"] == "ok" and record["gflops"] > 0 and record["n"] == 96
    assert record["reward"] == record["gflops"]  # the default reward: GFLOPS of correct code
    assert (
        record["host"]
        and record["machine"]
        and record["isolation"] in ("cgroup-v2", "cgroup-v1", "namespaces", "rlimits")
    )


def test_score_failing_kernel_still_exits_zero():
    out = run_lab("score", str(KERNELS / "hostile" / "no_work_empty_body.c"), *FAST_FLAGS, "--json")
    assert out.returncode == 0
    record = json.loads(out.stdout.strip().splitlines()[-1])
    assert record["status"] == "wrong_result" and record["gflops"] is None and record["reward"] == -10


def test_score_chat_completion_file():
    out = run_lab("score", str(KERNELS / "legit" / "chat_blocked_omp.md"), *FAST_FLAGS, "--threads", "2")
    assert out.returncode == 0 and out.stdout.startswith("ok")


@pytest.mark.parametrize(
    "args, message",
    [
        (["score", "missing.c"], "no such file: missing.c"),
        (["score", str(NAIVE), "--problem", "nope"], "unknown problem 'nope'"),
        (["score", str(NAIVE), "--threads", "0"], "must be positive"),
        (["score", str(NAIVE), "--mode", "gpu"], "invalid choice: 'gpu' (choose from 'serial', 'openmp')"),
        (["score", str(NAIVE), "--mode", "serial", "--threads", "2"], "serial mode runs on 1 thread"),
        (["score"], "required"),
    ],
)
def test_bad_usage_is_one_clear_line(args, message):
    out = run_lab(*args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("lab: error:")


def test_score_batch_joins_results_by_id(tmp_path):
    records = [
        {"id": "a", "completion": NAIVE.read_text()},
        {"id": "b", "completion": "no code here"},
        {"id": "c", "completion": (EXAMPLES / "dgemv" / "examples" / "naive.c").read_text(), "problem": "dgemv"},
        {"id": "d", "completion": NAIVE.read_text()},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out_path = tmp_path / "out.jsonl"
    out = run_lab("score-batch", str(src), "--out", str(out_path), *FAST_FLAGS)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b", "c", "d"]
    assert [r["status"] for r in rows] == ["ok", "format_error", "ok", "ok"]
    assert rows[2]["problem"] == "dgemv" and rows[3]["cached"]
    assert rows[1]["reward"] == -100.0 and rows[0]["reward"] == rows[0]["gflops"] == rows[3]["gflops"]


def test_score_batch_measures_each_record_in_its_own_mode(tmp_path):
    """Records written by `lab sample --mode` carry their execution model (and an OpenMP one its
    thread count): serial records run on 1 thread and refuse OpenMP, OpenMP ones on their threads."""
    # An OpenMP kernel this CPU compiles: the packed AVX-512 one where it can.
    omp = (
        EXAMPLES / "dgemm" / "examples" / ("packed_avx512_omp.c" if CPU_AVX512 else "chat_answer_blocked_omp.md")
    ).read_text()
    records = [
        {"id": "s", "completion": NAIVE.read_text(), "mode": "serial"},
        {"id": "s-omp", "completion": omp, "mode": "serial"},
        {"id": "o", "completion": omp, "mode": "openmp", "threads": 2},
        {"id": "plain", "completion": NAIVE.read_text()},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out_path = tmp_path / "out.jsonl"
    out = run_lab("score-batch", str(src), "--out", str(out_path), "--mode", "serial", *FAST_FLAGS)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in map(json.loads, out_path.read_text().splitlines())}
    assert rows["s"]["status"] == "ok" and (rows["s"]["mode"], rows["s"]["threads"]) == ("serial", 1)
    assert rows["s-omp"]["status"] == "forbidden"
    assert rows["o"]["status"] == "ok" and (rows["o"]["mode"], rows["o"]["threads"]) == ("openmp", 2)
    assert (rows["plain"]["mode"], rows["plain"]["threads"]) == ("serial", 1)  # no mode of its own: --mode
    records[2]["threads"] = 4
    records.append({"id": "o2", "completion": omp, "mode": "openmp", "threads": 2})
    src.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out = run_lab("score-batch", str(src), "--out", str(out_path))
    assert out.returncode == 2 and "different thread counts [2, 4]" in out.stderr


def test_score_batch_rejects_bad_jsonl(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"id": 1, "completion": "x"}\nnot json\n')
    out = run_lab("score-batch", str(src), "--out", str(tmp_path / "o.jsonl"))
    assert out.returncode == 2 and "bad.jsonl:2: not JSON" in out.stderr


def test_run_dry_run_prints_the_resolved_config():
    out = run_lab(
        "run",
        "--config",
        "configs/smoke.yaml",
        "--experiment",
        "grpo_sqd",
        "--set",
        "train.steps=5",
        "--set",
        "experiments.grpo_sqd.sqd.empty_weight=3.0",
        "--dry-run",
    )
    assert out.returncode == 0, out.stderr
    resolved = yaml.safe_load(out.stdout)
    cfg = ExperimentConfig.from_dict(resolved)  # what it prints is a complete, valid experiment
    assert cfg.name == "grpo_sqd" and cfg.kind == "grpo" and cfg.model == "models/seed-policy-smoke"
    assert cfg.train.steps == 5 and cfg.train.group_size == 4 and cfg.measure.n == 64  # smoke over default
    assert cfg.sqd.steps_per_stage == 1 and cfg.sqd.empty_weight == 3.0


@pytest.mark.parametrize(
    "args, message",
    [
        (["--experiment", "nope"], "no experiment 'nope'"),
        (["--experiment", "grpo", "--set", "train.steps=0"], "train.steps"),
        (["--experiment", "grpo", "--set", "train.stepz=3"], "unknown key"),
        (["--experiment", "grpo", "--set", "steps"], "expected key.path=value"),
    ],
)
def test_run_reports_a_bad_config_in_one_line(args, message):
    out = run_lab("run", "--config", "configs/smoke.yaml", *args, "--dry-run")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("lab: error:")


def test_problems_json_lists_every_problem_with_both_modes():
    out = run_lab("problems", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["name"] for r in rows] == sorted(r["name"] for r in rows)
    assert {"dgemm", "dgemv", "dot"} <= {r["name"] for r in rows}
    assert all(r["modes"] == ["serial", "openmp"] and r["unit"] for r in rows)


def test_score_mode_serial_forbids_openmp_and_records_the_mode():
    omp = EXAMPLES / "dot" / "examples" / "omp_simd_reduction.c"
    serial = json.loads(
        run_lab("score", str(omp), "--problem", "dot", "--mode", "serial", "--n", "1000", "--json").stdout
    )
    assert serial["status"] == "forbidden" and "serial mode" in serial["detail"] and serial["mode"] == "serial"
    par = json.loads(run_lab("score", str(omp), "--problem", "dot", "--mode", "openmp", "--n", "1000", "--json").stdout)
    assert par["status"] == "ok" and par["mode"] == "openmp" and par["threads"] == 2
