"""Measuring on a Dask cluster (lab.harness.cluster), for real: a `dask scheduler` and `dask
worker` processes on 127.0.0.1, a batch scored through them with `lab score-batch --dask`, one
worker killed mid-batch, and a worker of other evaluator code refused.

Every process here is this test's own child in a session of its own; only those sessions
are signalled, and every file goes under the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, LAB, ROOT, live_sandbox_processes, run_lab

pytestmark = pytest.mark.slow  # starts a scheduler and workers

NAIVE = (EXAMPLES / "dgemm" / "examples" / "naive.c").read_text()
DASK = str(Path(sys.executable).parent / "dask")  # the `dask` command setup installs
START_S = 60.0


def _spawn(log: Path, argv: list[str], env: dict | None = None) -> subprocess.Popen:
    # A log file, not a pipe: an unread pipe fills up and blocks a chatty process.
    with open(log, "wb") as out:
        return subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env or os.environ.copy(), cwd=ROOT
        )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # its own session only
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _address_in(info: Path) -> str | None:
    """The address in a scheduler file, or None while the file is missing or half written."""
    try:
        return json.loads(info.read_text()).get("address")
    except (FileNotFoundError, json.JSONDecodeError):
        return None


class Cluster:
    """A scheduler and named workers on 127.0.0.1, each worker with a cache folder of its own."""

    def __init__(self, tmp: Path):
        self.tmp, self.workers = tmp, {}
        info = tmp / "scheduler.json"
        self.scheduler = _spawn(
            tmp / "scheduler.log",
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
            + ["--scheduler-file", str(info)],
        )
        # The scheduler creates its file before it writes it: wait for an address, not for the file.
        deadline = time.monotonic() + START_S
        while not (address := _address_in(info)):
            assert self.scheduler.poll() is None and time.monotonic() < deadline, (tmp / "scheduler.log").read_text()
            time.sleep(0.1)
        self.address = address

    def add_worker(self, name: str, **env: str) -> None:
        cache = self.tmp / f"{name}-cache"
        self.workers[name] = _spawn(
            self.tmp / f"{name}.log",
            [DASK, "worker", self.address, "--host", "127.0.0.1", "--name", name]
            + ["--nthreads", "1", "--no-nanny", "--no-dashboard"],
            env={**os.environ, "LAB_CACHE_DIR": str(cache), **env},
        )

    def client(self):
        from distributed import Client

        return Client(self.address, timeout="30s", set_as_default=False)

    def wait_for(self, n: int) -> None:
        with self.client() as c:
            c.wait_for_workers(n, timeout=START_S)

    def kill_when_busy(self, name: str, run: subprocess.Popen) -> None:
        """Kill worker `name` (its whole session) while it measures a candidate of `run`."""
        with self.client() as c:
            deadline = time.monotonic() + 120
            while run.poll() is None and time.monotonic() < deadline:
                addr = [a for a, w in c.scheduler_info(n_workers=-1)["workers"].items() if w["name"] == name]
                if addr and c.processing(workers=addr).get(addr[0]):
                    time.sleep(0.3)  # into the measurement, not just handed the task
                    os.killpg(self.workers[name].pid, signal.SIGKILL)
                    return
                time.sleep(0.05)

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            _stop(proc)


@pytest.fixture
def cluster(tmp_path):
    pytest.importorskip("distributed")
    c = Cluster(tmp_path)
    yield c
    c.close()
    # A worker killed mid-kernel leaves its kernel running outside any CPU lock until the kernel's
    # own time limit: gone before the next test looks for escaped processes.
    time.sleep(1.0)
    deadline = time.monotonic() + 60
    while live_sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.5)


def _batch(tmp: Path, n: int) -> Path:
    """n distinct naive kernels (a comment apiece), so none is a copy of another."""
    src = tmp / "in.jsonl"
    src.write_text("".join(json.dumps({"id": f"k{i}", "completion": f"/* {i} */\n{NAIVE}"}) + "\n" for i in range(n)))
    return src


def _score_batch(src: Path, out: Path, address: str, cache: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*LAB, "score-batch", str(src), "--out", str(out), "--dask", address]
        + ["--mode", "serial", "--n", "128", *flags],
        cwd=ROOT,
        env={**os.environ, "LAB_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_batch_survives_a_worker_killed_midway_and_an_odd_worker_is_refused(cluster, tmp_path):
    # "odd" runs another harness (one more definition in bench.h): another measurement version.
    # (A changed comment or README would not count: it changes no measurement.)
    other = tmp_path / "other-harness"
    shutil.copytree(ROOT / "harness", other)
    (other / "bench.h").write_text((other / "bench.h").read_text() + "\n#define LAB_ODD_HARNESS 1\n")
    cluster.add_worker("w1")
    cluster.add_worker("w2")
    cluster.add_worker("odd", LAB_HARNESS_DIR=str(other))
    cluster.wait_for(3)
    src, out, cache = _batch(tmp_path, 8), tmp_path / "out.jsonl", tmp_path / "client-cache"
    run = _score_batch(src, out, cluster.address, cache)
    cluster.kill_when_busy("w1", run)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr
    assert cluster.workers["w1"].wait(10) == -signal.SIGKILL  # killed mid-batch, not after it
    assert "refusing dask worker" in stderr and "(host " in stderr and "lab code or of harness/" in stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # Every candidate exactly once, measured, with the host and the worker that measured it.
    assert sorted(r["id"] for r in rows) == sorted(f"k{i}" for i in range(8))
    # (suspicious: measured, but a calibration taken while something else loaded the machine disagreed)
    assert {r["status"] for r in rows} <= {"ok", "suspicious"}, [r["detail"] for r in rows if r["status"] != "ok"]
    assert all(r["host"] == socket.gethostname() and r["worker"] in ("w1", "w2") for r in rows)  # never "odd"
    assert any(r["worker"] == "w2" for r in rows)
    assert all(r["calibration"]["peak_gflops_per_core"] > 0 and r["calibration"]["openblas_gflops"] > 0 for r in rows)
    # The cache is the client's: workers wrote none (a dying one could not leave a result there)...
    assert not (tmp_path / "w1-cache" / "evals").exists() and not (tmp_path / "w2-cache" / "evals").exists()
    # ...and the client's holds every candidate: the same batch again is answered from it.
    again = _score_batch(src, tmp_path / "again.jsonl", cluster.address, cache)
    assert again.wait(120) == 0
    rows2 = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert all(r["cached"] for r in rows2) and [r["gflops"] for r in rows2] == [r["gflops"] for r in rows]
    # Keyed by the workers' machine, which here is this one: a local run finds the same entries.
    local = run_lab(
        "score-batch",
        *(str(src), "--out", str(tmp_path / "local.jsonl"), "--mode", "serial", "--n", "128"),
        env={**os.environ, "LAB_CACHE_DIR": str(cache)},
        timeout=120,
    )
    assert local.returncode == 0 and all(json.loads(line)["cached"] for line in (tmp_path / "local.jsonl").open())


def test_a_batch_whose_workers_all_died_goes_on_with_one_that_joins(cluster, tmp_path):
    cluster.add_worker("w1")
    cluster.wait_for(1)
    src, out = _batch(tmp_path, 4), tmp_path / "out.jsonl"
    run = _score_batch(src, out, cluster.address, tmp_path / "client-cache", "--no-cache")
    cluster.kill_when_busy("w1", run)
    assert cluster.workers["w1"].wait(10) == -signal.SIGKILL
    cluster.add_worker("w2")  # as a cluster manager would replace a lost node
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["k0", "k1", "k2", "k3"]
    assert {r["status"] for r in rows} <= {"ok", "suspicious"}, [r["detail"] for r in rows]
    assert any(r["worker"] == "w2" for r in rows)


def test_an_unreachable_scheduler_is_one_line_naming_it(tmp_path, capsys):
    pytest.importorskip("distributed")
    from lab.cli import main

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src = _batch(tmp_path, 1)
    for address, says in (
        (f"tcp://127.0.0.1:{port}", f"lab: error: cannot reach the dask scheduler at tcp://127.0.0.1:{port}"),
        ("nonsense", "lab: error: not a dask scheduler address: nonsense"),
    ):
        assert main(["score-batch", str(src), "--out", str(tmp_path / "out.jsonl"), "--dask", address]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(says) and len(err.splitlines()) == 1
    assert not (tmp_path / "out.jsonl").exists()


class _FakeClient:
    """The two calls Session.refresh makes of a distributed Client, answered from a table."""

    status = "running"

    def __init__(self, facts: dict[str, dict]):
        self.facts = facts

    def scheduler_info(self, n_workers: int = -1) -> dict:
        return {"workers": {addr: {} for addr in self.facts}}

    def run(self, fn, workers, on_error):
        return {addr: self.facts[addr] for addr in workers}


def test_workers_of_another_machine_or_evaluator_are_refused(capsys):
    from lab.harness.cluster import Session

    def worker(machine: str, evaluator: str = "E") -> dict:
        return {"host": f"node-{machine}", "machine": machine, "evaluator": evaluator}

    # Stale-code workers do not count towards the majority: they are refused whatever their machine.
    client = _FakeClient(
        {
            "tcp://a:1": worker("M1"),
            "tcp://b:1": worker("M2"),
            "tcp://c:1": worker("M1"),
            "tcp://s1:1": worker("M3", evaluator="stale"),
            "tcp://s2:1": worker("M3", evaluator="stale"),
            "tcp://s3:1": worker("M3", evaluator="stale"),
        }
    )
    session = Session("tcp://head:8786", client, probe=None, evaluator="E")
    assert session.refresh() == ["tcp://a:1", "tcp://c:1"] and session.machine == "M1"
    # A worker joining later is held to the same machine and code; one whose probe fails is named.
    client.facts |= {"tcp://d:1": worker("M1", evaluator="other"), "tcp://e:1": worker("M1")}
    client.facts["tcp://f:1"] = ModuleNotFoundError("No module named 'lab'")
    assert session.refresh() == ["tcp://a:1", "tcp://c:1", "tcp://e:1"]
    assert sorted(session.refused) == ["tcp://b:1", "tcp://d:1", "tcp://f:1", "tcp://s1:1", "tcp://s2:1", "tcp://s3:1"]
    err = capsys.readouterr().err.splitlines()
    assert (
        "lab: refusing dask worker tcp://b:1 (host node-M2): its compiler/CPU fingerprint M2 is not the cluster's M1"
        in err
    )
    assert (
        "lab: refusing dask worker tcp://d:1 (host node-M1): runs another version of the lab code or of harness/" in err
    )
    assert any(
        line.startswith("lab: refusing dask worker tcp://f:1 (host ?): its probe failed (ModuleNotFoundError")
        for line in err
    )


class _FakeFuture:
    def __init__(self, key: str, value, finished: bool):
        self.key, self.value, self.status = key, value, "finished" if finished else "pending"

    def done(self) -> bool:
        return self.status != "pending"

    def result(self, timeout=None):
        return self.value


class _FakeScheduler(_FakeClient):
    """A client whose first batch's only worker dies as soon as it is handed the tasks (after
    finishing those in `quick`); `newcomer` then joins, and finishes whatever it is sent."""

    def __init__(self, facts, quick=(), newcomer=None):
        super().__init__(facts)
        self.quick, self.newcomer, self.submitted = set(quick), newcomer, []

    def map(self, fn, items, *args, key, pure, workers, allow_other_workers):
        first = not self.submitted
        futures = [_FakeFuture(k, fn(i), finished=(i in self.quick) or not first) for k, i in zip(key, items)]
        self.submitted.append((list(items), workers))
        if first:
            self.facts = dict(self.newcomer or {})
        return futures

    def cancel(self, futures):
        for f in futures:
            f.status = "cancelled"


def test_a_batch_whose_workers_die_waits_for_a_newcomer_or_ends_with_one_error_each(monkeypatch):
    from lab.harness import cluster

    monkeypatch.setattr(cluster, "POLL_S", 0.01)
    monkeypatch.setattr(cluster, "WORKER_WAIT_S", 0.3)
    worker = {"host": "n", "machine": "M", "evaluator": "E"}
    # Nobody comes: the finished task counts once, the other two end with an error each.
    client = _FakeScheduler({"tcp://a:1": worker}, quick={1})
    out = list(cluster.Session("tcp://head:1", client, probe=None, evaluator="E").map(lambda x: x * 10, [1, 2, 3]))
    assert out[0] == (1, 10) and sorted(item for item, _ in out[1:]) == [2, 3] and len(out) == 3
    assert all(isinstance(e, cluster.ClusterError) and "no accepted dask worker" in str(e) for _, e in out[1:])
    # A worker joins: the stranded tasks are sent to it (and only to it) and finish there.
    client = _FakeScheduler({"tcp://a:1": worker}, quick={1}, newcomer={"tcp://b:1": worker})
    out = list(cluster.Session("tcp://head:1", client, probe=None, evaluator="E").map(lambda x: x * 10, [1, 2, 3]))
    assert sorted(out) == [(1, 10), (2, 20), (3, 30)]
    assert client.submitted == [([1, 2, 3], ["tcp://a:1"]), ([2, 3], ["tcp://b:1"])]
