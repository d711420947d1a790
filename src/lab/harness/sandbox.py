"""Run an untrusted program: its own user, namespaces, a cgroup, limits, timeout, and no survivors.

`run(argv, workdir, limits, cores, uid)` starts `argv` in `workdir` and returns a
`RunOutcome` once the program and everything it started are gone. When the
harness runs as root (CI, the lab's own machines) the child, before exec:

- joins a cgroup of its own (v2, or v1 where that is what the machine has) with
  cpuset = `cores`, a memory limit and a pids limit, covering everything the
  program starts, when the machine lets us create one;
- starts a new session and gets new mount, network and IPC namespaces: no
  network interface but a downed loopback, and private empty tmpfs mounts over
  /tmp, /var/tmp, /dev/shm and /run/lock (the world-writable places), so its only
  lasting writable place is `workdir`;
- is pinned to `cores` (explicit affinity; nothing inherited by accident);
- gets hard rlimits: address space, CPU seconds, file size, open files,
  processes, no core dumps;
- drops to a sandbox user id of its own (one per core slot, never shared by two
  live runs, never handed out while it still owns a process), with no
  supplementary groups and no_new_privs; a parent-death signal kills it if the
  harness dies.

The parent enforces the wall-clock timeout, then kills every process of the
sandbox uid with kill(-1, SIGKILL) issued *as that uid*, which reaches all of the
child's descendants (even ones that left its session) and nothing else. The
harness process is a child subreaper, so orphans of the run are reparented to
it and reaped here. It then checks /proc and reports any survivor. Output goes
to a log file outside `workdir` (the program cannot replace it), capped by
RLIMIT_FSIZE; results come back on a pipe of their own (`result_fd`), read capped.

`isolation_level()` names what is in force, and every result records it:
`cgroup-v2` / `cgroup-v1` (all of the above), `namespaces` (root, but no usable
cgroup: rlimits instead of the cgroup, affinity verified from outside by the
measurer), `rlimits` (not root: session, affinity, rlimits, timeout and
process-group kill only). The candidate's own process adds a seccomp filter at
every level (harness/bench.h). The README's sandbox section says what each level
guarantees.

CPU slots are locked machine-wide (flock on files in `lock_dir()`, a fixed path
under /dev/shm), so evaluators with different TMPDIRs never share CPUs or uids.
`core_slot()` takes a slot for an evaluation (and clears its uid of leftovers);
`hold_cpus()` takes CPUs' locks without touching their uids (escape checks, another
evaluator's stand-in in a test), `whole_machine()` every slot at once (calibrations).

Sandbox namespaces keep two lab processes on one machine apart (`make test` beside
`make reproduce`, in one checkout or two): $LAB_SANDBOX_NAMESPACE = k (an integer,
0 when unset; the test suite sets 1 in the root conftest.py) gives CPU c the uid
`sandbox_uid(c)` = SANDBOX_UID_BASE + k * UID_NAMESPACE_STRIDE + c, and the uid's
lock a folder of the namespace's own, `uid_lock_dir()` (in `lock_dir()`). A slot's
uid is cleared (every process of it killed) when the slot is handed out, so two
namespaces sharing uids could kill each other's kernels; with their own uids and uid
locks, one namespace's leftovers, escape checks and clearing never touch another's.
The CPU locks themselves stay machine-wide, shared by every namespace: they are what
keeps timing honest (a kernel timed beside another on its CPU, or a calibration
taken under load, is wrong for good), so the test suite's evaluations still wait
for a lab run's CPUs and the other way round.

Why by hand: Python 3.11 has no os.unshare, and a setuid helper such as
bubblewrap is not on every machine the lab runs on; the few libc calls and
cgroup files below are the whole of it.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import itertools
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWIPC = 0x00020000, 0x40000000, 0x08000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 1, 36, 38

#: First of the sandbox user ids: in namespace k, CPU c's slot runs as
#: SANDBOX_UID_BASE + k * UID_NAMESPACE_STRIDE + c (sandbox_uid).
SANDBOX_UID_BASE = 1_900_000_000
#: uids per namespace: more than the CPUs of any machine (a CPU number is below 65536).
UID_NAMESPACE_STRIDE = 65536
#: The last namespace: every sandbox uid stays below 2^31 (some tools read a uid as signed).
MAX_NAMESPACE = 999
#: Longest wait for a free CPU slot before the evaluation fails as the host's fault.
LOCK_TIMEOUT_S = 900.0
#: How much of the program's output is kept for the verdict's detail.
OUTPUT_KEEP_BYTES = 4096
#: Most bytes read from the result pipe; a real report is < 4 KiB.
RESULT_CAP_BYTES = 65536


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run."""

    wall_s: float = 30.0  # killed (with its whole tree) after this much wall time
    cpu_s: int = 60  # RLIMIT_CPU, summed over threads: a backstop to wall_s
    memory_mb: int = 2048  # RLIMIT_AS
    file_mb: int = 1  # RLIMIT_FSIZE: largest file it may write, its output log included
    processes: int = 32  # RLIMIT_NPROC for the sandbox uid (threads count too)
    open_files: int = 64  # RLIMIT_NOFILE


@dataclass
class RunOutcome:
    """What happened to one sandboxed run."""

    returncode: int | None  # exit status, None when killed by a signal
    signal: int | None  # terminating signal number, if any
    timed_out: bool  # the wall-clock limit was reached
    wall_s: float  # wall time from start to exit
    cpu_s: float  # user + system CPU time of the program and its reaped children
    output: str  # the first OUTPUT_KEEP_BYTES of stdout+stderr
    output_bytes: int  # how much it wrote in total
    result: bytes  # what arrived on the result pipe
    killed: int = 0  # processes of the sandbox uid still running after the program ended (then killed)
    survivors: int = 0  # processes of the sandbox uid still alive after cleanup (should be 0)
    oom_killed: bool = False  # the run's cgroup killed a process for exceeding its memory limit
    isolation: dict = field(default_factory=dict)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signal).name if self.signal else ""


def is_root() -> bool:
    return os.geteuid() == 0


def isolation() -> dict:
    """Which sandbox layers are active in this process."""
    root = is_root()
    layout = cgroup_layout()
    return {
        "cgroup": layout[0] if layout else None,
        "separate_uid": root,
        "network_namespace": root,
        "mount_namespace": root,
        "seccomp": True,  # installed by the runner itself (harness/bench.h), at every level
        "rlimits": True,
        "timeout_kill": True,
        "process_group": True,
    }


def isolation_level() -> str:
    """The isolation in force, as one word recorded in every result (see the module docstring):
    `cgroup-v2`, `cgroup-v1`, `namespaces` or `rlimits`."""
    if not is_root():
        return "rlimits"
    layout = cgroup_layout()
    return f"cgroup-{layout[0]}" if layout else "namespaces"


def lock_dir() -> Path:
    """Where the locks that serialize use of each CPU live: one fixed place per machine, shared by
    every namespace ($LAB_LOCK_DIR overrides it, for tests that need a private set of slots)."""
    return Path(os.environ.get("LAB_LOCK_DIR") or "/dev/shm/lab-locks")


def namespace() -> int:
    """This process's sandbox namespace, $LAB_SANDBOX_NAMESPACE (0 when unset or empty): an integer
    from 0 to MAX_NAMESPACE. Read at every call, like lab.paths, so a test or a child process can
    be given another one through its environment."""
    raw = os.environ.get("LAB_SANDBOX_NAMESPACE", "").strip()
    try:
        k = int(raw or "0")
    except ValueError:
        k = -1
    if not 0 <= k <= MAX_NAMESPACE:
        raise ValueError(f"LAB_SANDBOX_NAMESPACE must be an integer from 0 to {MAX_NAMESPACE}, not {raw!r}")
    return k


def sandbox_uid(cpu: int) -> int:
    """The sandbox user id of CPU `cpu`'s slot in this namespace.

    >>> sandbox_uid(3) - sandbox_uid(0), (sandbox_uid(0) - SANDBOX_UID_BASE) // UID_NAMESPACE_STRIDE == namespace()
    (3, True)
    """
    return SANDBOX_UID_BASE + namespace() * UID_NAMESPACE_STRIDE + cpu


def uid_lock_dir() -> Path:
    """Where this namespace's uid locks live (a folder of lock_dir(), one per namespace): held with
    the CPU lock by every evaluation, and alone by an escape check (hold_cpus(machine_wide=False)),
    which then waits only for this namespace's evaluations."""
    return lock_dir() / f"uids-ns{namespace()}"


def live_processes(uid: int) -> list[int]:
    """The pids of the live (not zombie) processes owned by `uid`."""
    return _uid_processes(uid)[0]


# ---- cgroups ------------------------------------------------------------------------------

_CONTROLLERS = ("cpuset", "memory", "pids")
_run_ids = itertools.count()


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _own_cgroups() -> dict[str, str]:
    """controller (or "" for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    out = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _mounts(fstype: str) -> list[tuple[Path, set[str]]]:
    found = []
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == fstype:
            found.append((Path(parts[1]), set(parts[3].split(","))))
    return found


def _cgroup_v2() -> tuple[str, dict[str, Path]] | None:
    own = _own_cgroups().get("")
    for mount, _ in _mounts("cgroup2"):
        here = mount / (own or "/").lstrip("/")
        if not set(_CONTROLLERS) <= set((here / "cgroup.controllers").read_text().split()):
            continue
        enable = " ".join(f"+{c}" for c in _CONTROLLERS)
        _write(here / "cgroup.subtree_control", enable)  # refused where `here` holds processes (not root)
        base = here / "lab"
        base.mkdir(exist_ok=True)
        _write(base / "cgroup.subtree_control", enable)
        return "v2", {"": base}
    return None


def _cgroup_v1() -> tuple[str, dict[str, Path]] | None:
    own = _own_cgroups()
    bases = {}
    for controller in _CONTROLLERS:
        mount = next((m for m, opts in _mounts("cgroup") if controller in opts), None)
        if mount is None or controller not in own:
            return None
        here = mount / own[controller].lstrip("/")
        base = here / "lab"
        base.mkdir(exist_ok=True)
        if controller == "cpuset":  # a v1 cpuset group starts empty: give it its parent's CPUs and nodes
            for name in ("cpuset.cpus", "cpuset.mems"):
                _write(base / name, (here / name).read_text().strip())
        bases[controller] = base
    return "v1", bases


@functools.cache
def cgroup_layout() -> tuple[str, dict[str, Path]] | None:
    """("v2" | "v1", {controller: the folder lab's cgroups go in}) where this process, as root,
    can create cgroups with cpuset, memory and pids; None where it cannot."""
    if not is_root():
        return None
    for probe in (_cgroup_v2, _cgroup_v1):
        with contextlib.suppress(OSError, ValueError):
            layout = probe()
            if layout:
                with RunCgroup(layout, (min(os.sched_getaffinity(0)),), 64, 8):  # can we really use one?
                    pass
                return layout
    return None


class RunCgroup:
    """One run's cgroup (in every controller's hierarchy under v1): created with its limits,
    joined by the child before exec, removed when the run is over."""

    def __init__(self, layout: tuple[str, dict[str, Path]], cores: Sequence[int], memory_mb: int, pids: int):
        self.version, bases = layout
        name = f"run-{os.getpid()}-{next(_run_ids)}"
        self.dirs = {c: base / name for c, base in bases.items()}
        for d in self.dirs.values():
            d.mkdir()
        try:
            cpus, memory = ",".join(map(str, cores)), str(memory_mb * 1024 * 1024)
            if self.version == "v2":
                d = self.dirs[""]
                _write(d / "cpuset.cpus", cpus)
                _write(d / "memory.max", memory)
                _write(d / "memory.swap.max", "0") if (d / "memory.swap.max").exists() else None
                _write(d / "pids.max", str(pids))
            else:
                cpuset, mem = self.dirs["cpuset"], self.dirs["memory"]
                _write(cpuset / "cpuset.cpus", cpus)
                _write(cpuset / "cpuset.mems", (cpuset.parent / "cpuset.mems").read_text().strip())
                _write(mem / "memory.limit_in_bytes", memory)
                with contextlib.suppress(OSError):  # absent or refused without swap accounting
                    _write(mem / "memory.memsw.limit_in_bytes", memory)
                _write(self.dirs["pids"] / "pids.max", str(pids))
        except BaseException:
            self.remove()
            raise

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def oom_kills(self) -> int:
        d = self.dirs.get("") or self.dirs["memory"]
        events = d / ("memory.events" if self.version == "v2" else "memory.oom_control")
        with contextlib.suppress(OSError):
            for line in events.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def remove(self) -> None:
        for d in self.dirs.values():
            for _ in range(50):  # a just-killed process can take a moment to leave the group
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)

    def __enter__(self) -> RunCgroup:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _child_setup(cores: Sequence[int], limits: Limits, uid: int | None, cgroup_procs: Sequence[str]) -> None:
    """Runs in the forked child before exec (see the module docstring)."""
    for procs in cgroup_procs:  # first, so that everything below is already accounted in the group
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)
    os.setsid()
    if uid is not None:
        _check(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC), "unshare")
        _check(_libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "mount private")
        for path in (b"/tmp", b"/var/tmp", b"/dev/shm", b"/run/lock"):
            if os.path.isdir(path):
                _check(
                    _libc.mount(b"tmpfs", path, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=64m,mode=1777"),
                    f"mount tmpfs {path!r}",
                )
    os.sched_setaffinity(0, cores)
    mb = 1024 * 1024
    for res, value in (
        (resource.RLIMIT_AS, limits.memory_mb * mb),
        (resource.RLIMIT_CPU, limits.cpu_s),
        (resource.RLIMIT_FSIZE, limits.file_mb * mb),
        (resource.RLIMIT_NOFILE, limits.open_files),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(res, (value, value))
    if uid is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")


def _uid_processes(uid: int) -> tuple[list[int], list[int]]:
    """(live, zombie) pids owned by `uid`."""
    live, zombies = [], []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
                    (zombies if state == "Z" else live).append(int(entry.name))
    return live, zombies


def _kill_uid(uid: int, keep_zombie: int | None = None) -> int:
    """SIGKILL every process of `uid` (as that uid, so nothing else can be hit); return survivors.

    `keep_zombie` is the run's own child, which the waiting thread reaps itself."""
    for _ in range(20):
        live, zombies = _uid_processes(uid)
        for pid in (z for z in zombies if z != keep_zombie):  # orphans reparented to us (a subreaper)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        if not live:
            return 0
        # kill(-1) from a process running as `uid` reaches exactly that uid's processes,
        # atomically with respect to fork, so a fork bomb cannot outrun it.
        subprocess.run(
            ["kill", "-KILL", "--", "-1"],
            user=uid,
            group=uid,
            extra_groups=[],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        time.sleep(0.005)
    return len(_uid_processes(uid)[0])


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class SandboxBusy(RuntimeError):
    """A sandbox resource is held by something the harness cannot clear (a host fault)."""


def _lock_folder(folder: Path) -> Path:
    if not folder.is_dir():
        with contextlib.suppress(FileExistsError):
            folder.mkdir(parents=True)
            os.chmod(folder, 0o1777)  # any user's evaluator locks CPUs here, as in /tmp
    return folder


def _open_lock(path: Path) -> int:
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o666)
    with contextlib.suppress(PermissionError):
        os.fchmod(fd, 0o666)  # despite the umask: other users lock the same file
    return fd


def _lock_paths(cpu: int) -> tuple[Path, Path]:
    """CPU `cpu`'s locks, in the order they are taken: this namespace's lock of its uid, then the
    machine-wide lock of the CPU (every taker goes in this order, so none waits on another in a cycle).
    Only the first is the namespace's: the CPU is one for every namespace, and so is its timing."""
    cpu_locks = _lock_folder(lock_dir())  # first: the uid folder inside it must not create it root-only
    return _lock_folder(uid_lock_dir()) / f"cpu{cpu}.lock", cpu_locks / f"cpu{cpu}.lock"


def _try_lock(paths: Sequence[Path]) -> list[int] | None:
    """flock every file of `paths` without waiting: the descriptors holding them all, or None (none held)."""
    fds: list[int] = []
    for path in paths:
        fd = _open_lock(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            for held in fds:
                os.close(held)
            return None
        fds.append(fd)
    return fds


@contextlib.contextmanager
def hold_cpus(cpus: Iterable[int], machine_wide: bool = True, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the locks of `cpus`, one CPU at a time in ascending order (the order core_slot(exact=True)
    callers and whole_machine() take them in), without touching their uids: no process is killed.

    machine_wide=True: this namespace's uid lock and the machine-wide CPU lock of each, so that no
    evaluation of any namespace runs there meanwhile (another evaluator's stand-in in a test, work
    that must not be timed beside a kernel). machine_wide=False: the uid locks only, so that no
    evaluation of this namespace holds those CPUs' uids (an escape check: a process of such a uid
    is then a leftover, not a kernel being measured), without waiting for other namespaces' runs.
    Each lock is polled (flock has no timeout); SandboxBusy after `timeout_s` seconds on one.
    """
    with contextlib.ExitStack() as stack:
        for cpu in sorted(set(cpus)):
            for path in _lock_paths(cpu)[: 2 if machine_wide else 1]:
                deadline = time.monotonic() + timeout_s
                while (fds := _try_lock([path])) is None:
                    if time.monotonic() > deadline:
                        raise SandboxBusy(f"{path} stayed locked for {timeout_s:g} s")
                    time.sleep(0.02)
                stack.callback(os.close, fds[0])
        yield


@contextlib.contextmanager
def core_slot(threads: int, preferred: int = 0, exact: bool = False) -> Iterator[tuple[tuple[int, ...], int]]:
    """Hold `threads` CPUs (and the sandbox uid that goes with them) for one evaluation.

    CPUs are locked with flock on files in lock_dir(), so concurrent evaluations in any
    process on this machine never share a CPU; their uids with flock on files in
    uid_lock_dir() as well. Yields (cores, uid), the uid cleared of any process left in it.
    """
    cpus = sorted(os.sched_getaffinity(0))
    threads = max(1, min(threads, len(cpus)))
    slots = [tuple(cpus[i : i + threads]) for i in range(0, len(cpus) - threads + 1, threads)]
    order = slots[preferred % len(slots) :] + slots[: preferred % len(slots)]

    # The preferred slot if free, else any free one; when all are busy, poll (flock has no timeout).
    # exact=True waits for the preferred slot only: callers taking several slots take them in order.
    candidates = order[:1] if exact else order
    slot_locks = {slot: [path for cpu in slot for path in _lock_paths(cpu)] for slot in candidates}

    def lock(slot: tuple[int, ...]) -> list[int] | None:  # all of the slot's locks, or none
        return _try_lock(slot_locks[slot])

    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        chosen = next((slot for slot in candidates if (fds := lock(slot)) is not None), None)
        if chosen is not None:
            break
        if time.monotonic() > deadline:
            raise SandboxBusy(f"no CPU slot came free in {LOCK_TIMEOUT_S:g} s (locks in {lock_dir()})")
        time.sleep(0.02)
    try:
        uid = sandbox_uid(chosen[0])
        if is_root() and _uid_processes(uid)[0] and _kill_uid(uid):
            # Left by an evaluator that died without cleaning up, and unkillable: never hand it out.
            raise SandboxBusy(f"sandbox uid {uid} still owns processes that cannot be killed")
        yield chosen, uid
    finally:
        for fd in fds:
            os.close(fd)


@contextlib.contextmanager
def whole_machine() -> Iterator[None]:
    """Hold every CPU slot of this process's CPUs, as core_slot hands them out (each uid cleared of
    leftovers, whose spinning would slow what runs here), taken one at a time in ascending order so
    that two callers cannot deadlock: what each calibration is measured under."""
    with contextlib.ExitStack() as stack:
        for slot in range(len(os.sched_getaffinity(0))):
            stack.enter_context(core_slot(1, preferred=slot, exact=True))
        yield


def prepare_workdir(path: Path, uid: int | None) -> None:
    """Hand `path` to the sandbox uid so that it is the one place the program may write."""
    if uid is not None:
        os.chown(path, uid, uid)
        for child in path.iterdir():
            os.chown(child, uid, uid)


def remove_tree(path: Path, uid: int | None, timeout_s: float = 30.0) -> None:
    """Delete a work directory, whatever the program left in it (a very deep tree, unreadable
    folders, thousands of files). First shutil.rmtree (fast, link-safe); if that fails,
    `chmod -R` and `rm -rf` walk iteratively, run as the sandbox uid (so nothing outside what
    that uid owns can be touched) with a time limit; whatever remains (the top folder, owned by
    the parent) goes last."""
    if not path.exists():
        return
    # The usual case first, in-process: nothing runs as the uid any more (its processes were
    # killed) and rmtree's descriptor-based walk never follows a link. Anything unusual (a
    # tree deeper than the recursion limit, a folder it cannot open) takes the path below.
    with contextlib.suppress(OSError, RecursionError):
        shutil.rmtree(path)
        return
    user = dict(user=uid, group=uid, extra_groups=[]) if uid is not None and is_root() else {}
    for argv in (["chmod", "-R", "u+rwx", "--", str(path)], ["rm", "-rf", "--one-file-system", "--", str(path)]):
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            subprocess.run(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout_s, check=False, **user
            )
    if path.exists():  # what the uid could not remove: the folder itself, when the parent owns it
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], timeout=timeout_s, check=False)


def run(
    argv: Sequence[str],
    workdir: Path,
    limits: Limits,
    cores: Sequence[int],
    uid: int | None,
    env: dict[str, str] | None = None,
    want_result: bool = False,
    log_dir: Path | None = None,
) -> RunOutcome:
    """Run argv in the sandbox; see the module docstring for the guarantees. The output log goes
    to `log_dir` (default: `workdir`'s parent), a place the program cannot write."""
    uid = uid if is_root() else None
    if uid is not None:
        _check(_libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "subreaper")
    layout = cgroup_layout()
    cgroup = RunCgroup(layout, cores, limits.memory_mb, limits.processes) if layout else None
    try:
        return _run(argv, workdir, limits, cores, uid, env, want_result, log_dir or workdir.parent, cgroup)
    finally:
        if cgroup is not None:
            cgroup.remove()


def _run(argv, workdir, limits, cores, uid, env, want_result, log_dir, cgroup) -> RunOutcome:
    log_path = log_dir / f".output-{os.getpid()}-{next(_run_ids)}.log"
    read_fd = write_fd = None
    if want_result:
        read_fd, write_fd = os.pipe()
        argv = [a.replace("{result_fd}", str(write_fd)) for a in argv]
    result = bytearray()

    def drain() -> None:
        while len(result) < RESULT_CAP_BYTES:
            chunk = os.read(read_fd, 4096)
            if not chunk:
                break
            result.extend(chunk)

    base_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C", "HOME": str(workdir), "TMPDIR": "/tmp"}
    # The log is read back through this same descriptor: the program owns the directory and
    # could swap the path for a link to a file it must not see.
    log = open(log_path, "w+b")  # noqa: SIM115 - closed at the end of _run()
    start = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        cwd=workdir,
        env={**base_env, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        close_fds=True,
        pass_fds=(write_fd,) if write_fd is not None else (),
        preexec_fn=lambda: _child_setup(cores, limits, uid, cgroup.procs_files if cgroup else []),  # noqa: PLW1509
    )
    if write_fd is not None:
        os.close(write_fd)
        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        _kill_uid(uid, keep_zombie=proc.pid) if uid is not None else _kill_group(proc.pid)

    timer = threading.Timer(limits.wall_s, on_timeout)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        timer.join()  # a kill already under way must finish before the uid can be reused
    wall_s = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # tell Popen it was reaped
    killed = len(_uid_processes(uid)[0]) if uid is not None and not timed_out.is_set() else 0
    survivors = _kill_uid(uid) if uid is not None else (_kill_group(proc.pid) or 0)
    if read_fd is not None:
        reader.join(timeout=1.0)
        os.close(read_fd)
    with log:
        output_bytes = os.fstat(log.fileno()).st_size
        log.seek(0)
        output = log.read(OUTPUT_KEEP_BYTES).decode("utf-8", "replace")
    log_path.unlink(missing_ok=True)
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    return RunOutcome(
        returncode=None if sig else os.WEXITSTATUS(status),
        signal=sig,
        timed_out=timed_out.is_set(),
        wall_s=wall_s,
        cpu_s=usage.ru_utime + usage.ru_stime,
        output=output,
        output_bytes=output_bytes,
        result=bytes(result),
        killed=killed,
        survivors=survivors,
        oom_killed=bool(cgroup and cgroup.oom_kills()),
        isolation=isolation(),
    )
