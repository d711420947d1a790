"""lab.harness.target: the ISA tier, detected and forced (LAB_TARGET), and what follows from it.

A forced tier must reproduce a lower CPU's instruction set on this one: the class, the compile
flags, the prompts, the refused target pragmas and attributes, the object scan and, end to end,
AVX-512 intrinsics as compile errors while an AVX2 kernel is measured. The end-to-end and
object tests need a machine above the tier they force, and skip elsewhere.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from lab import paths
from lab.harness import target
from lab.harness.build import BuildConfig
from lab.harness.machine import machine_class, machine_fingerprint
from lab.harness.problems import load_problem
from lab.harness.static_check import check_object, check_preprocessed, check_source
from lab.policy.prompts import prompt_text

DGEMM = load_problem("dgemm")
NATIVE = target.native()
ABOVE_AVX2 = target.TIERS[NATIVE].arch == "x86_64" and target.TIERS[NATIVE].rank > target.TIERS["avx2"].rank
needs_above_avx2 = pytest.mark.skipif(not ABOVE_AVX2, reason=f"this machine's tier ({NATIVE}) is not above avx2")

BODY = "void dgemm(int n, const double *A, const double *B, double *C) { for (int i = 0; i < n * n; i++) C[i] = 0; }\n"


def checked(source: str, tmp_path: Path):
    """The source and preprocessed checks of `source`, preprocessed as the harness does at the tier."""
    (tmp_path / "candidate.c").write_text(source)
    violation = check_source(source, DGEMM)
    if violation:
        return violation
    cmd = ["gcc", *BuildConfig().candidate_cflags(), "-E", "candidate.c", "-o", "candidate.i"]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    return check_preprocessed((tmp_path / "candidate.i").read_text(), "candidate.c", DGEMM)


@pytest.fixture
def at(monkeypatch):
    """Work at a tier for the test: at("avx2")."""

    def force(name: str) -> None:
        monkeypatch.setenv(target.ENV, name)

    return force


def test_the_native_tier_is_one_of_this_architecture():
    assert target.TIERS[NATIVE].arch == platform.machine()
    assert target.current() == NATIVE and not target.forced()
    assert machine_class() == machine_fingerprint()  # the native tier adds nothing: old results keep their class
    assert "-march=native" in BuildConfig().cflags


def test_lab_target_refuses_unknown_higher_and_foreign_tiers(at):
    for wanted, said in (("avx1024", "unknown tier"), ("neon" if NATIVE != "neon" else "avx2", "can work at")):
        at(wanted)
        with pytest.raises(target.UnsupportedMachine, match=said):
            target.current()
    if NATIVE != "avx512" and target.TIERS[NATIVE].arch == "x86_64":
        at("avx512")
        with pytest.raises(target.UnsupportedMachine, match="its own"):
            target.current()


def test_the_command_line_says_one_line_and_exits_2_for_a_bad_target(tmp_path):
    kernel = tmp_path / "k.c"
    kernel.write_text(BODY)
    run = subprocess.run(
        [sys.executable, "-m", "lab.cli", "score", str(kernel), "--problem", "dgemm"],
        capture_output=True,
        text=True,
        env={**os.environ, target.ENV: "avx1024"},
        timeout=120,
    )
    assert run.returncode == 2 and run.stderr.strip().count("\n") == 0, run.stderr
    assert "LAB_TARGET=avx1024" in run.stderr


@needs_above_avx2
def test_a_forced_tier_is_a_class_of_its_own_with_its_flags_and_prompts(at):
    at("avx2")
    assert target.forced() and machine_class() == f"{machine_fingerprint()}-avx2"
    assert BuildConfig().cflags == ("-O3", "-march=x86-64-v3", "-mtune=native", "-fopenmp")
    for split in ("train", "eval"):
        for i in range(len(DGEMM.phrasings(split))):
            text = prompt_text("dgemm", mode="serial", split=split, phrasing=i)
            assert "AVX2 and FMA (no AVX-512)" in text and "{" not in text
    # The seed corpus names the tier its kernels are written for, whatever the machine's.
    assert "with AVX-512" in prompt_text("dgemm", phrasing=0, tier="avx512")


@pytest.mark.parametrize(
    "spelling",
    [
        '#pragma GCC target("avx512f")\n',
        '#pragma GCC target("avx2", "avx512bw")\n',
        '#pragma GCC target("arch=skylake-avx512")\n',
        '__attribute__((target("avx512f,fma"))) static void helper(void) {}\n',
        '[[gnu::target("avx512vl")]] static void helper(void) {}\n',
    ],
)
def test_target_pragmas_and_attributes_above_a_forced_tier_are_refused(at, spelling, tmp_path):
    source = "#include <immintrin.h>\n" + spelling + BODY
    at(NATIVE)
    assert checked(source, tmp_path) is None  # at the machine's own tier, as before
    if not ABOVE_AVX2:
        pytest.skip("needs a tier above avx2 to force avx2")
    at("avx2")
    violation = checked(source, tmp_path)
    assert violation is not None and violation.status == "forbidden" and "avx2 tier" in violation.detail


@needs_above_avx2
def test_what_the_tier_has_stays_allowed(at, tmp_path):
    at("avx2")
    for spelling in (
        '#pragma GCC target("avx2,fma")\n',
        '__attribute__((target("avx2", "no-avx512f"))) static void h(void) {}\n',
    ):
        assert checked("#include <immintrin.h>\n" + spelling + BODY, tmp_path) is None


def test_immintrin_stands_for_its_parts():
    for header in ("emmintrin.h", "xmmintrin.h", "smmintrin.h", "immintrin.h"):
        assert check_source(f"#include <{header}>\n" + BODY, DGEMM) is None, header
    for header in ("x86intrin.h", "wmmintrin.h"):  # the time-stamp counter; AES
        assert check_source(f"#include <{header}>\n" + BODY, DGEMM).status == "forbidden"


@needs_above_avx2
def test_the_object_scan_finds_avx512_instructions_under_a_forced_tier(at, tmp_path):
    source = tmp_path / "k.c"
    source.write_text(
        "#include <immintrin.h>\n"
        "void dgemm(int n, const double *A, const double *B, double *C) {\n"
        "  for (int i = 0; i + 8 <= n * n; i += 8) _mm512_storeu_pd(C + i, _mm512_loadu_pd(A + i));\n}\n"
    )
    obj = tmp_path / "k.o"
    subprocess.run(["gcc", "-O2", "-march=native", "-c", str(source), "-o", str(obj)], check=True)
    assert check_object(obj, DGEMM) is None  # at the machine's own tier
    at("avx2")
    violation = check_object(obj, DGEMM)
    assert violation is not None and violation.status == "forbidden" and "zmm" in violation.detail


@needs_above_avx2
def test_avx512_intrinsics_do_not_build_under_avx2_while_an_avx2_kernel_is_measured(at):
    from lab.harness.evaluate import evaluate_batch

    at("avx2")
    examples = Path(paths.harness_dir()) / "dgemm" / "examples"
    sources = [(examples / name).read_text() for name in ("packed_avx512_omp.c", "packed_avx2_omp.c")]
    avx512, avx2 = evaluate_batch(sources, "dgemm", cache=False, n_jobs=1, progress=False)
    assert avx512.status == "compile_error" and "_mm512" in avx512.detail
    assert avx2.status == "ok", avx2.detail
    assert avx2.machine == f"{machine_fingerprint()}-avx2"


CROSS = "aarch64-linux-gnu-gcc"


@pytest.mark.skipif(__import__("shutil").which(CROSS) is None, reason=f"{CROSS} is not installed")
@pytest.mark.parametrize("role", ["MEASURER", "RUNNER"])
def test_the_c_harness_compiles_for_aarch64(role, tmp_path):
    """Every problem's driver (both halves, the runner's seccomp filter written for aarch64's ABI),
    the peak and bandwidth programs: the C harness is not bound to x86 (AES in portable C)."""
    harness = Path(paths.harness_dir())
    drivers = sorted(harness.glob("*/driver.c"))
    assert drivers
    for driver in drivers:
        cmd = [CROSS, "-O2", "-fopenmp", "-Wall", "-Werror", f"-DLAB_ROLE_{role}", "-c", str(driver)]
        subprocess.run([*cmd, "-o", str(tmp_path / "d.o")], check=True, capture_output=True, text=True)
    for program in ("peak.c", "bandwidth.c"):
        cmd = [CROSS, "-O2", "-fopenmp", "-Werror", str(harness / program), "-o", str(tmp_path / "p")]
        subprocess.run(cmd, check=True, capture_output=True, text=True)


@needs_above_avx2
def test_openblas_runs_the_forced_tiers_kernels(at):
    """The yardstick is of the kernels' tier: OpenBLAS told the tier's core type, in a process of its
    own (it reads the variable as it loads); a build that ignored it would raise, not mislead."""
    from lab.harness.machine import openblas_gflops

    at("avx2")
    assert openblas_gflops("dgemm", 64, 1) > 0


QEMU = "qemu-aarch64"


@pytest.mark.slow
@pytest.mark.skipif(
    any(__import__("shutil").which(t) is None for t in (CROSS, QEMU)), reason=f"needs {CROSS} and {QEMU}"
)
def test_kernels_are_checked_on_aarch64_under_emulation():
    """Every problem's naive kernel passes the driver's checks and the parent's checksum check
    on aarch64 under qemu-user (unsandboxed, correctness only); a wrong kernel does not, and
    AVX-512 intrinsics do not build there."""
    from lab.harness.emulated import check_emulated

    harness = Path(paths.harness_dir())
    for naive in sorted(harness.glob("*/examples/naive.c")):
        verdict = check_emulated(naive.read_text(), naive.parent.parent.name, "aarch64")
        assert verdict.status == "ok", (naive, verdict)
    wrong = (harness / "dot" / "examples" / "naive.c").read_text().replace("return", "return 1.0 +", 1)
    assert check_emulated(wrong, "dot", "aarch64").status == "wrong_result"
    avx512 = (harness / "dgemm" / "examples" / "packed_avx512_omp.c").read_text()
    assert check_emulated(avx512, "dgemm", "aarch64", mode="openmp").status == "compile_error"


def test_emulation_names_what_is_missing(monkeypatch):
    from lab.harness import emulated

    monkeypatch.setattr(emulated.shutil, "which", lambda tool: None)
    with pytest.raises(emulated.EmulationUnavailable, match="needs aarch64-linux-gnu-gcc, qemu-aarch64"):
        emulated.check_emulated("", "dgemm", "aarch64")
    with pytest.raises(ValueError, match="no emulated checks for 'riscv64'"):
        emulated.missing_tools("riscv64")
