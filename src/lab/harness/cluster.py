"""Measuring on a Dask cluster: the workers of a `dask scheduler`, each on its own host.

    session = connect("tcp://head:8786", probe, evaluator)  # once per address and process
    for item, value in session.map(fn, items, *args):
        ...                                    # each item exactly once, in the order they finish

lab.harness.evaluate sends each candidate to a worker as one task (`score_on_worker`): the
worker measures on its own host, holding that host's CPU slots (the machine-wide locks are
per host) and its own calibration, and returns the result with its host, worker name and
machine fingerprint. The cache is written by the client only, from results it received.

Which workers measure. On connecting, and again before each batch for workers that joined
since, every worker is asked for its machine fingerprint (compiler and CPU) and the measurement
version of its code (lab.provenance: the C harness and the modules on the measuring path,
the same version results are reused by). The cluster's machine is the
fingerprint most workers have; a worker with another machine or other evaluator code is
refused: it is never sent a task, and a line names it. So one batch's speedups always come
from one kind of machine. (The majority is taken among the workers running the client's
code when the client first looks; later workers, and later sessions of the process, are
held to it.)

Faults. A worker that dies mid-batch takes its tasks' results with it: the scheduler runs
them again on another worker (a task that was on more than `allowed-failures` dying
workers, 3 by default, ends as KilledWorker). Each task's future resolves exactly once, so nothing is
counted twice; a task that failed comes back as the exception, and the caller turns it into
a `harness_error` (never cached). If no accepted worker is left, the batch waits up to
WORKER_WAIT_S for one to join, sending the remaining tasks to it, then gives up on them. Any
other failure of the cluster mid-batch (the scheduler lost) also ends each remaining
candidate with an error rather than raising: the caller gets one result per candidate.

Distributed is used directly rather than through joblib's dask backend: the backend aborts
the whole batch on one task's failure, and gives no say over which workers run a task or
where results are cached.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: Seconds to wait for a scheduler to answer, and for a first worker to join it.
CONNECT_TIMEOUT_S = 15.0
WORKER_WAIT_S = 120.0
#: How often a batch with no progress checks that it still has a worker.
POLL_S = 2.0


class ClusterError(RuntimeError):
    """A cluster that cannot be used; the message is one line naming the address."""


@dataclass
class Session:
    """A client of one scheduler, and the workers it accepts (address -> facts). `probe` runs on
    each worker and returns its {"host", "machine", "evaluator"} fingerprints; `evaluator` is the
    client's own evaluator fingerprint, which every worker must share."""

    address: str
    client: Any
    probe: Callable[[], dict]
    evaluator: str
    machine: str = ""
    accepted: dict[str, dict] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # address -> why

    def refresh(self) -> list[str]:
        """Check the workers that joined since the last look; the accepted ones now alive."""
        alive = set(self.client.scheduler_info(n_workers=-1)["workers"])
        new = sorted(alive - set(self.accepted) - set(self.refused))
        if new:
            try:
                facts = self.client.run(self.probe, workers=new, on_error="return")
            except OSError as err:
                raise ClusterError(f"dask scheduler at {self.address}: {err}") from None
            for addr, f in list(facts.items()):
                if isinstance(f, OSError):  # it died meanwhile: not seen, looked at again if it comes back
                    del facts[addr]
                elif isinstance(f, BaseException):  # e.g. lab cannot be imported there
                    self._refuse(addr, "?", f"its probe failed ({type(f).__name__}: {str(f)[:120]})")
                    del facts[addr]
            same_code = {a: f for a, f in facts.items() if f["evaluator"] == self.evaluator}
            if not self.machine and same_code:
                # The cluster's machine: the fingerprint most workers running this code have (ties:
                # the first in order); workers of other code would only be refused.
                counts = collections.Counter(f["machine"] for f in same_code.values())
                self.machine = _MACHINES.setdefault(self.address, max(sorted(counts), key=counts.__getitem__))
            for addr, f in facts.items():
                if f["evaluator"] != self.evaluator:
                    self._refuse(addr, f["host"], "runs another version of the lab code or of harness/")
                elif self.machine and f["machine"] != self.machine:
                    why = f"its compiler/CPU fingerprint {f['machine']} is not the cluster's {self.machine}"
                    self._refuse(addr, f["host"], why)
                else:
                    self.accepted[addr] = f
        return sorted(set(self.accepted) & alive)

    def _refuse(self, addr: str, host: str, why: str) -> None:
        self.refused[addr] = why
        print(f"lab: refusing dask worker {addr} (host {host}): {why}", file=sys.stderr, flush=True)

    def map(self, fn: Callable, items: list, *args: Any) -> Iterator[tuple[Any, Any]]:
        """(item, fn(item, *args)) for every item, as they finish, each exactly once; a task that
        failed yields its exception as the value. Tasks run only on accepted workers."""
        pending: dict[Any, Any] = {}  # future -> item

        def submit(todo: list, workers: list[str]) -> None:
            batch = uuid.uuid4().hex
            futures = self.client.map(
                fn,
                todo,
                *[[a] * len(todo) for a in args],
                key=[f"lab-{batch}-{i}" for i in range(len(todo))],
                pure=False,
                workers=workers,
                allow_other_workers=False,
            )
            pending.update(zip(futures, todo))

        try:
            workers = self.refresh() or (self._wait_for_workers() if items else [])
            if workers:
                submit(list(items), workers)
        except (ClusterError, OSError) as err:
            yield from ((item, ClusterError(f"dask scheduler at {self.address}: {err}")) for item in items)
            return
        if not workers:
            yield from ((item, ClusterError(self._no_workers())) for item in items)
            return
        checked, lost_since = time.monotonic(), None
        while pending:
            # Polling the futures' states keeps this loop free of the client's event loop and of a
            # default client; a batch is tens of futures, so a pass costs nothing.
            finished = [f for f in pending if f.done()]
            for fut in finished:
                outcome = _outcome(fut)
                if outcome is not _NOT_YET:
                    yield pending.pop(fut), outcome
            now = time.monotonic()
            if finished or now - checked < POLL_S:
                time.sleep(0 if finished else 0.02)
                continue
            checked = now
            try:
                if self.client.status != "running":  # the scheduler is gone: its tasks will not come back
                    raise ClusterError(f"lost the dask scheduler at {self.address}")
                alive = self.refresh()
                if set(alive) & set(workers):
                    lost_since = None
                    continue
                # Every worker the tasks may run on is gone: send them to the accepted workers there
                # are now, or wait for one to join.
                lost_since = lost_since or now
                stranded = list(pending.values())
                if alive:
                    self.client.cancel(list(pending))
                    pending.clear()
                    workers, lost_since = alive, None
                    submit(stranded, workers)
                elif now - lost_since > WORKER_WAIT_S:
                    raise ClusterError(self._no_workers())
            except (ClusterError, OSError) as err:
                # Whatever happened to the cluster, each candidate still gets its one result.
                stranded = list(pending.values())
                with contextlib.suppress(Exception):
                    self.client.cancel(list(pending))
                yield from (
                    (item, err if isinstance(err, ClusterError) else ClusterError(str(err))) for item in stranded
                )
                return

    def cluster_machine(self) -> str:
        """The fingerprint of the machines this cluster measures on (waiting for a first worker
        if there is none yet); raises ClusterError if no worker can be accepted."""
        if not self.machine and not (self.refresh() or self._wait_for_workers()):
            raise ClusterError(self._no_workers())
        return self.machine

    def _wait_for_workers(self) -> list[str]:
        print(
            f"lab: waiting up to {WORKER_WAIT_S:g} s for a dask worker at {self.address}", file=sys.stderr, flush=True
        )
        deadline = time.monotonic() + WORKER_WAIT_S
        while time.monotonic() < deadline:
            workers = self.refresh()
            if workers:
                return workers
            time.sleep(POLL_S)
        return []

    def _no_workers(self) -> str:
        refused = f" ({len(self.refused)} refused)" if self.refused else ""
        return f"no accepted dask worker at {self.address}{refused} for {WORKER_WAIT_S:g} s"


_NOT_YET = object()


def _outcome(fut) -> Any:
    """A finished future's value, or the exception that ended it; _NOT_YET if fetching the value
    timed out (the worker holding it died since: the scheduler computes it again)."""
    try:
        if fut.status == "finished":
            return fut.result(timeout=POLL_S)
        if fut.status == "error":
            return fut.exception(timeout=POLL_S)
    except TimeoutError:
        return _NOT_YET
    except Exception as err:  # noqa: BLE001 - cancelled, or the connection went: the candidate's result is lost
        return ClusterError(f"task {fut.key}: {type(err).__name__}")
    return ClusterError(f"task {fut.key} was {fut.status}")


async def _handshake(address: str) -> None:
    import socket

    from distributed.comm import connect, get_address_host_port

    # A refused port answers at once; Dask's own connect would retry it until the timeout.
    socket.create_connection(get_address_host_port(address), timeout=CONNECT_TIMEOUT_S).close()
    comm = await connect(address, timeout=CONNECT_TIMEOUT_S)
    await comm.close()


def _cause(err: BaseException) -> str:
    """The last, most specific part of a connection error's message."""
    return getattr(err, "strerror", None) or str(err).rsplit(": ", 1)[-1] or type(err).__name__


_SESSIONS: dict[str, Session] = {}
#: The machine each scheduler's workers measure on, kept for the process: a reconnected session
#: holds new workers to the same machine.
_MACHINES: dict[str, str] = {}


def connect(address: str, probe: Callable[[], dict], evaluator: str) -> Session:
    """The session with the scheduler at `address` (made once per process; see Session for
    `probe` and `evaluator`). Raises ClusterError, one line naming the address, if the
    scheduler cannot be reached."""
    old = _SESSIONS.get(address)
    if old is not None and old.client.status == "running":
        return old
    if old is not None:
        with contextlib.suppress(Exception):
            old.client.close(timeout=1)
    import logging

    from distributed import Client

    # A handshake first, in a thread of its own (a notebook's thread runs an event loop already): a
    # Client that fails to connect lingers until exit, retrying, so none is made for a bad address.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        try:
            pool.submit(asyncio.run, _handshake(address)).result()
        except ValueError as err:
            raise ClusterError(f"not a dask scheduler address: {address} ({err})") from None
        except (OSError, TimeoutError) as err:
            raise ClusterError(f"cannot reach the dask scheduler at {address} ({_cause(err)})") from None
        except Exception as err:  # noqa: BLE001 - something answered, but not in Dask's protocol
            raise ClusterError(f"{address} did not answer as a dask scheduler ({type(err).__name__})") from None
    logging.getLogger("distributed").setLevel(logging.ERROR)  # its per-connection INFO lines
    client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False)
    session = _SESSIONS[address] = Session(address, client, probe, evaluator)
    return session
