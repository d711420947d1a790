"""The sandbox on its own: hostile *programs* (past any static check) must be contained.

Each attack is a small C program compiled by the test and run through
sandbox.run directly, as if a candidate had slipped through every static check.
All attacks are bounded (children end by themselves within 30 s, loops are capped),
signal only their own parent process, and write only under /tmp.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lab.harness import sandbox
from tests.conftest import live_sandbox_processes, requires_root


@pytest.fixture
def slot():
    """The first CPU's slot: a test that holds a slot while it looks for escaped processes must
    hold the lowest CPUs (tests/conftest.py's live_sandbox_processes says why)."""
    with sandbox.core_slot(1, preferred=0, exact=True) as (cores, uid):
        yield cores, uid


def build(tmp_path: Path, name: str, body: str, uid: int) -> Path:
    work = tmp_path / name
    work.mkdir()
    src = work / "prog.c"
    src.write_text(
        "#define _GNU_SOURCE\n#include <errno.h>\n#include <fcntl.h>\n#include <signal.h>\n"
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n"
        "#include <sys/socket.h>\n#include <netinet/in.h>\n#include <arpa/inet.h>\n" + textwrap.dedent(body)
    )
    subprocess.run(["gcc", "-O1", str(src), "-o", str(work / "prog")], check=True)
    sandbox.prepare_workdir(work, uid)
    return work


def run(work: Path, slot, *args: str, **limits) -> sandbox.RunOutcome:
    cores, uid = slot
    return sandbox.run(["./prog", *args], work, sandbox.Limits(**{"wall_s": 5, **limits}), cores, uid)


@requires_root
def test_runs_as_unprivileged_uid_without_network(tmp_path, slot):
    work = build(
        tmp_path,
        "id",
        """
        int main(void) {
            if (getuid() == 0 || geteuid() == 0) return 10;
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(22)};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0) return 11;
            return errno == ENETUNREACH ? 0 : 12;
        }""",
        slot[1],
    )
    out = run(work, slot)
    assert out.returncode == 0, out


@requires_root
def test_cannot_reach_a_listening_loopback_server(tmp_path, slot):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    work = build(
        tmp_path,
        "net",
        f"""
        int main(void) {{
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {{.sin_family = AF_INET, .sin_port = htons({port})}};
            a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 1 : 0;
        }}""",
        slot[1],
    )
    out = run(work, slot)
    assert out.returncode == 0
    with pytest.raises(TimeoutError):
        server.accept()
    server.close()


@requires_root
def test_writes_outside_workdir_do_not_land(tmp_path, slot):
    canary = Path("/tmp/lab_escape_canary_sandbox_write")
    canary.unlink(missing_ok=True)
    target = tmp_path / "outside.txt"
    work = build(
        tmp_path,
        "write",
        f"""
        int main(void) {{
            int bad = 0;
            FILE *f = fopen("{canary}", "w");        /* private tmpfs: invisible outside */
            if (f) {{ fputs("escaped", f); fclose(f); }}
            if (fopen("{target}", "w")) bad |= 1;   /* root-owned directory: refused */
            if (fopen("/etc/lab_escape_canary", "w")) bad |= 2;
            FILE *g = fopen("inside.txt", "w");      /* its own workdir: allowed */
            if (!g) bad |= 4; else fclose(g);
            return bad;
        }}""",
        slot[1],
    )
    out = run(work, slot)
    assert out.returncode == 0, out
    assert not canary.exists() and not target.exists() and not Path("/etc/lab_escape_canary").exists()
    assert (work / "inside.txt").exists()


@requires_root
def test_signalling_the_parent_is_refused(tmp_path, slot):
    work = build(
        tmp_path,
        "kill",
        """
        int main(void) { return kill(getppid(), SIGTERM) == 0 ? 1 : (errno == EPERM ? 0 : 2); }""",
        slot[1],
    )
    out = run(work, slot)
    assert out.returncode == 0  # and this test process is still alive to check it


def test_infinite_loop_is_killed_at_the_wall_limit(tmp_path, slot):
    work = build(tmp_path, "loop", "int main(void) { for (;;) {} }", slot[1])
    t0 = time.monotonic()
    out = run(work, slot, wall_s=1.0)
    assert out.timed_out and out.signal == 9
    assert time.monotonic() - t0 < 3
    assert not live_sandbox_processes(holding=slot[0])


@requires_root
def test_detached_children_are_killed(tmp_path, slot):
    work = build(
        tmp_path,
        "fork",
        """
        int main(void) {
            for (int i = 0; i < 4; i++)
                if (fork() == 0) { setsid(); sleep(20); _exit(0); }   /* escapes the session */
            return 0;
        }""",
        slot[1],
    )
    out = run(work, slot)
    assert out.returncode == 0
    assert out.killed == 4 and out.survivors == 0
    assert not live_sandbox_processes(holding=slot[0])


@requires_root
def test_fork_bomb_is_bounded_and_cleaned_up(tmp_path, slot):
    work = build(
        tmp_path,
        "bomb",
        """
        int main(void) {
            int made = 0;
            for (int i = 0; i < 2000; i++) {            /* bounded: at most 2000 tries */
                pid_t p = fork();
                if (p == 0) { sleep(20); _exit(0); }
                if (p > 0) made++;
            }
            return made < 100 ? 0 : 1;                  /* RLIMIT_NPROC stopped it early */
        }""",
        slot[1],
    )
    out = run(work, slot, processes=16)
    assert out.returncode == 0, out
    assert out.survivors == 0 and not live_sandbox_processes(holding=slot[0])


def test_output_flood_is_capped(tmp_path, slot):
    work = build(
        tmp_path,
        "flood",
        """
        int main(void) {
            static char buf[65536];
            memset(buf, 'x', sizeof buf);
            for (int i = 0; i < 4096; i++) fwrite(buf, 1, sizeof buf, stdout);   /* 256 MiB */
            return 0;
        }""",
        slot[1],
    )
    out = run(work, slot, file_mb=1)
    assert out.signal == 25 or out.returncode != 0  # SIGXFSZ
    assert out.output_bytes <= 1024 * 1024 and len(out.output) <= sandbox.OUTPUT_KEEP_BYTES


def test_memory_exhaustion_hits_the_limit(tmp_path, slot):
    work = build(
        tmp_path,
        "mem",
        """
        int main(void) {
            size_t total = 0;
            for (int i = 0; i < 64; i++) {              /* at most 16 GiB asked */
                char *p = malloc(256u << 20);
                if (!p) return total < (1u << 30) ? 0 : 1;
                memset(p, 1, 256u << 20);
                total += 256u << 20;
            }
            return 2;
        }""",
        slot[1],
    )
    out = run(work, slot, memory_mb=512)
    assert out.returncode == 0, out


def test_cpu_affinity_is_the_slot(tmp_path, slot):
    work = build(
        tmp_path,
        "aff",
        """
        #include <sched.h>
        int main(void) { cpu_set_t s; sched_getaffinity(0, sizeof s, &s); printf("%d", CPU_COUNT(&s)); return 0; }""",
        slot[1],
    )
    out = run(work, slot)
    assert out.output.strip() == str(len(slot[0]))


def test_result_pipe_is_separate_from_output(tmp_path, slot):
    work = build(
        tmp_path,
        "pipe",
        """
        int main(int argc, char **argv) {
            int fd = atoi(argv[1]);
            printf("status ok\\n");                    /* stdout never reaches the result */
            dprintf(fd, "status real\\n");
            return 0;
        }""",
        slot[1],
    )
    cores, uid = slot
    out = sandbox.run(["./prog", "{result_fd}"], work, sandbox.Limits(wall_s=5), cores, uid, want_result=True)
    assert out.result == b"status real\n" and "status ok" in out.output


def test_core_slots_never_overlap():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: one slot")
    # Taken in order, each waiting for its own slot, as the harness's whole-machine calibration
    # takes them: two slots taken in any order could each wait on another test worker's.
    with (
        sandbox.core_slot(1, preferred=0, exact=True) as (a, uid_a),
        sandbox.core_slot(1, preferred=1, exact=True) as (b, uid_b),
    ):
        assert set(a).isdisjoint(b) and uid_a != uid_b


requires_cgroup = pytest.mark.skipif(sandbox.cgroup_layout() is None, reason="no writable cgroup on this machine")


@requires_cgroup
def test_memory_limit_covers_the_whole_tree(tmp_path, slot):
    """Four processes of 150 MiB each stay under a per-process limit of 256 MiB, not under the run's."""
    work = build(
        tmp_path,
        "tree",
        """
        #include <sys/wait.h>
        int main(void) {
            for (int i = 0; i < 4; i++)
                if (fork() == 0) {
                    volatile char *p = malloc(150u << 20);  /* volatile: no store may be optimized away */
                    for (size_t k = 0; p && k < (150u << 20); k += 4096) p[k] = 1;
                    sleep(2);
                    _exit(0);
                }
            while (wait(NULL) > 0) {}
            return 0;
        }""",
        slot[1],
    )
    out = run(work, slot, memory_mb=256, processes=8)
    assert out.oom_killed, out


@requires_cgroup
def test_cpuset_holds_against_affinity_changes(tmp_path, slot):
    work = build(
        tmp_path,
        "cpuset",
        """
        #include <sched.h>
        int main(void) {
            cpu_set_t s; CPU_ZERO(&s);
            for (int c = 0; c < 64; c++) CPU_SET(c, &s);
            sched_setaffinity(0, sizeof s, &s);        /* ask for every CPU */
            sched_getaffinity(0, sizeof s, &s);
            for (int c = 0; c < 64; c++) if (CPU_ISSET(c, &s)) printf("%d ", c);
            return 0;
        }""",
        slot[1],
    )
    out = run(work, slot)
    assert [int(c) for c in out.output.split()] == list(slot[0])


def test_log_lives_outside_the_workdir(tmp_path, slot):
    """A directory where an older harness kept its log, and links in the workdir, change nothing."""
    work = build(tmp_path, "log", 'int main(void) { puts("hello"); return 0; }', slot[1])
    (work / ".output.log").mkdir()
    out = run(work, slot)
    assert out.returncode == 0 and out.output.strip() == "hello"
    assert not list(tmp_path.glob(".output-*.log"))  # and the log is gone afterwards


def test_remove_tree_clears_whatever_the_program_left(tmp_path, slot):
    work = build(
        tmp_path,
        "mess",
        """
        #include <sys/stat.h>
        int main(void) {
            for (int i = 0; i < 3000; i++) { if (mkdir("d", 0700) || chdir("d")) return 1; }
            mkdir("locked", 0700);
            int fd = open("locked/f", O_CREAT | O_WRONLY, 0600);
            close(fd);
            chmod("locked", 0);
            return 0;
        }""",
        slot[1],
    )
    out = run(work, slot)
    assert out.returncode == 0, out.output
    start = time.monotonic()
    sandbox.remove_tree(work, slot[1])
    assert not work.exists() and time.monotonic() - start < 10


def test_locks_are_machine_wide_whatever_the_tmpdir(monkeypatch, tmp_path):
    monkeypatch.delenv("LAB_LOCK_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert sandbox.lock_dir() == Path("/dev/shm/lab-locks")


@requires_root
def test_a_uid_that_still_owns_processes_is_cleared_before_it_is_handed_out():
    with sandbox.core_slot(1) as (cores, held_uid):
        other = sandbox.sandbox_uid(cores[0])
        index = sorted(os.sched_getaffinity(0)).index(cores[0])
    # A leftover of a dead evaluator: a process of that uid, outside any sandbox run.
    leftover = subprocess.Popen(["sleep", "30"], user=other, group=other, extra_groups=[])
    try:
        # That slot again, even if another test worker now holds the first one.
        with sandbox.core_slot(1, preferred=index, exact=True) as (cores, uid):
            assert uid == other and not sandbox.live_processes(uid)
    finally:
        leftover.kill()
        leftover.wait()


#: Another evaluator measuring a kernel: it holds CPU argv[1]'s locks (as an evaluation does), runs a
#: process of that CPU's sandbox uid, says so, and after argv[2] seconds ends it and gives the CPU back.
_EVALUATOR = """
import subprocess, sys, time
from lab.harness import sandbox
cpu, hold_s = int(sys.argv[1]), float(sys.argv[2])
with sandbox.hold_cpus([cpu]):
    uid = sandbox.sandbox_uid(cpu)
    kernel = subprocess.Popen(["sleep", "30"], user=uid, group=uid, extra_groups=[])
    print("measuring", flush=True)
    time.sleep(hold_s)
    kernel.kill()
    kernel.wait()
"""


@requires_root
def test_escape_checks_wait_out_a_kernel_in_its_slot_and_see_a_leftover():
    """What every escape check of the tests relies on: a process of a sandbox uid counts only
    while no evaluator holds its CPU (another test worker's kernel is not an escape), and then it
    is found."""
    last = sorted(os.sched_getaffinity(0))[-1]
    evaluator = subprocess.Popen(
        [sys.executable, "-c", _EVALUATOR, str(last), "1.5"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert evaluator.stdout.readline().strip() == "measuring"
        start = time.monotonic()
        assert live_sandbox_processes() == []
        assert time.monotonic() - start > 1.0  # it waited for the evaluator to give the CPU back
    finally:
        evaluator.kill()
        evaluator.wait()
    # Holding the first CPU here, so that no evaluator of another worker takes it and clears the uid.
    with sandbox.core_slot(1, preferred=0, exact=True) as (cores, uid):
        leftover = subprocess.Popen(["sleep", "30"], user=uid, group=uid, extra_groups=[])
        try:
            assert leftover.pid in live_sandbox_processes(holding=cores)
        finally:
            leftover.kill()
            leftover.wait()


# ---- sandbox namespaces and the public lock helpers -------------------------------------------
# Each of these tests locks a private set of slots (LAB_LOCK_DIR in its own temporary folder) in
# namespaces no other test uses (2 to 5): nothing it holds or plants can meet another test's.


@pytest.fixture
def private_locks(monkeypatch, tmp_path):
    monkeypatch.setenv("LAB_LOCK_DIR", str(tmp_path / "locks"))
    return tmp_path / "locks"


def test_a_namespace_has_uids_and_uid_locks_of_its_own(monkeypatch):
    cpus = sorted(os.sched_getaffinity(0))
    monkeypatch.delenv("LAB_SANDBOX_NAMESPACE", raising=False)
    assert sandbox.namespace() == 0 and sandbox.sandbox_uid(cpus[0]) == sandbox.SANDBOX_UID_BASE + cpus[0]
    default_uids, default_locks = {sandbox.sandbox_uid(c) for c in cpus}, sandbox.uid_lock_dir()
    monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "2")
    assert sandbox.namespace() == 2
    assert sandbox.sandbox_uid(5) == sandbox.SANDBOX_UID_BASE + 2 * sandbox.UID_NAMESPACE_STRIDE + 5
    assert default_uids.isdisjoint(sandbox.sandbox_uid(c) for c in cpus)
    assert sandbox.uid_lock_dir() != default_locks and sandbox.uid_lock_dir().parent == sandbox.lock_dir()
    assert sandbox.lock_dir() == Path(os.environ.get("LAB_LOCK_DIR") or "/dev/shm/lab-locks")  # machine-wide
    monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", str(sandbox.MAX_NAMESPACE))
    assert sandbox.sandbox_uid(sandbox.UID_NAMESPACE_STRIDE - 1) < 2**31
    for bad in ("x", "-1", str(sandbox.MAX_NAMESPACE + 1), "1.5"):
        monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", bad)
        with pytest.raises(ValueError, match="LAB_SANDBOX_NAMESPACE"):
            sandbox.namespace()


def test_cpu_locks_are_shared_by_namespaces_and_uid_locks_are_not(monkeypatch, private_locks):
    """An evaluation in one namespace holds its CPU against every namespace (timing) and its uid
    against its own namespace only: another namespace's escape check does not wait for it."""
    cpu = min(os.sched_getaffinity(0))
    monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "2")
    with sandbox.core_slot(1, preferred=0, exact=True) as (cores, uid):
        assert cores == (cpu,) and uid == sandbox.sandbox_uid(cpu)
        for machine_wide in (True, False):  # its own namespace: neither lock is free
            with pytest.raises(sandbox.SandboxBusy), sandbox.hold_cpus([cpu], machine_wide, timeout_s=0.05):
                pass
        monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "3")
        with pytest.raises(sandbox.SandboxBusy), sandbox.hold_cpus([cpu], timeout_s=0.05):
            pass  # the CPU: held for every namespace
        with sandbox.hold_cpus([cpu], machine_wide=False, timeout_s=0.05):
            pass  # namespace 3's uid lock of that CPU: free
    with sandbox.hold_cpus([cpu], timeout_s=0.05):  # given back
        pass


def test_whole_machine_holds_every_cpu(monkeypatch, private_locks):
    monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "4")
    with sandbox.whole_machine():
        for cpu in os.sched_getaffinity(0):
            with pytest.raises(sandbox.SandboxBusy), sandbox.hold_cpus([cpu], timeout_s=0.02):
                pass
    with sandbox.hold_cpus(os.sched_getaffinity(0), timeout_s=0.05):
        pass


@requires_root
def test_a_slot_never_clears_another_namespaces_uid(monkeypatch, private_locks):
    """A leftover of namespace 5 (a lab run's kernel, for this test) survives namespace 4 (the test
    suite's) taking its CPU, and is cleared when namespace 5 takes the CPU again."""
    cpu = min(os.sched_getaffinity(0))
    monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "5")
    other = sandbox.sandbox_uid(cpu)
    leftover = subprocess.Popen(["sleep", "30"], user=other, group=other, extra_groups=[])
    try:
        monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "4")
        with sandbox.core_slot(1, preferred=0, exact=True) as (_, uid):
            assert uid != other and sandbox.live_processes(other) == [leftover.pid]
        monkeypatch.setenv("LAB_SANDBOX_NAMESPACE", "5")
        with sandbox.core_slot(1, preferred=0, exact=True) as (_, uid):
            assert uid == other and sandbox.live_processes(other) == []
    finally:
        leftover.kill()
        leftover.wait()
