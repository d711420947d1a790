"""lab.harness.problems: problem specs, the flop-formula compiler, and the input generator, which must
reproduce harness/bench.h's bench_fill() bit for bit (checked against the compiled C code).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from lab import paths
from lab.harness.problems import (
    BadProblem,
    UnknownProblem,
    _compile_flops,
    generate,
    harness_fingerprint,
    list_problems,
    load_problem,
)

# bench.h supplies the measurer's main(); rename it and stub the problem hooks so that a main of our own
# can print bench_fill() output as exact hex floats.
GEN_MAIN = r"""
#define main bench_main
#include "{bench_h}"
#undef main
static size_t problem_array_bytes(int k, int n) {{ (void)k; (void)n; return 0; }}
static void problem_bind(unsigned char *shared) {{ (void)shared; }}
static void problem_alloc(int max_n) {{ (void)max_n; }}
static void problem_fill(int n, uint64_t seed) {{ (void)n; (void)seed; }}
static void problem_collect(int n) {{ (void)n; }}
static void problem_call_baseline(int n) {{ (void)n; }}
static int problem_check_full(int n, double tol, char *why, size_t len) {{ (void)n; (void)tol; (void)why; (void)len; return 0; }}
static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {{ (void)n; (void)tol; (void)seed; (void)why; (void)len; return 0; }}
static double problem_flops(int n) {{ return n; }}
static void problem_checksum(int n, double *sum, double *abs_sum) {{ (void)n; *sum = *abs_sum = 0; }}

int main(int argc, char **argv) {{
    if (argc != 5) return 2;
    uint64_t seed = strtoull(argv[1], NULL, 10), stream = strtoull(argv[2], NULL, 10);
    size_t count = strtoull(argv[3], NULL, 10);
    const char *type = argv[4];
    double *x = malloc(count * sizeof(double) + 1);
    if (!strcmp(type, "f64")) {{
        bench_fill(x, count, seed, stream);
        for (size_t i = 0; i < count; i++) printf("%a\n", x[i]);
    }} else if (!strcmp(type, "i64")) {{
        bench_fill_i64((int64_t *)x, count, seed, stream, -7, 1000);
        for (size_t i = 0; i < count; i++) printf("%lld\n", (long long)((int64_t *)x)[i]);
    }} else if (!strcmp(type, "i32")) {{
        bench_fill_i32((int32_t *)x, count, seed, stream, 0, 99999);
        for (size_t i = 0; i < count; i++) printf("%d\n", ((int32_t *)x)[i]);
    }} else {{
        bench_fill_u8((uint8_t *)x, count, seed, stream);
        for (size_t i = 0; i < count; i++) printf("%d\n", ((uint8_t *)x)[i]);
    }}
    free(x);
    return 0;
}}
"""
#: Integer ranges the generator program uses (main() above).
INT_RANGES = {"i64": (-7, 1000), "i32": (0, 99999), "u8": None}


#: bench.h's three paths to the same key stream: as the CPU allows (VAES where it has it), AES-NI
#: alone, and portable C (the only one off x86-64).
AES_PATHS = {"native": [], "aes-ni": ["-DBENCH_AES_NO_VAES"], "portable": ["-DBENCH_AES_PORTABLE"]}


@pytest.fixture(scope="module", params=sorted(AES_PATHS))
def c_generator(request, tmp_path_factory):
    """Path of a compiled program: `gen SEED STREAM COUNT` prints bench_fill's values with %a."""
    tmp = tmp_path_factory.mktemp("gen")
    (tmp / "gen.c").write_text(GEN_MAIN.format(bench_h=paths.harness_dir() / "bench.h"))
    subprocess.run(
        ["gcc", "-O2", "-march=native", *AES_PATHS[request.param], "-DLAB_ROLE_MEASURER", "gen.c", "-o", "gen", "-lm"],
        cwd=tmp,
        check=True,
        capture_output=True,
        text=True,
    )
    return tmp / "gen"


def c_fill(gen, seed: int, stream: int, count: int, dtype: str = "f64") -> np.ndarray:
    out = subprocess.run(
        [str(gen), str(seed), str(stream), str(count), dtype], check=True, capture_output=True, text=True
    ).stdout
    if dtype == "f64":
        return np.array([float.fromhex(v) for v in out.split()], dtype=np.float64)
    return np.array([int(v) for v in out.split()], dtype=np.int64)


@pytest.mark.parametrize("dtype", ["i64", "i32", "u8"])
@pytest.mark.parametrize("seed,stream", [(0, 0), (12345, 2), (2**64 - 1, 1)])
def test_integer_generators_match_bench_h(c_generator, dtype, seed, stream):
    from lab.harness.problems import generate

    got = generate(seed, stream, (257,), dtype, INT_RANGES[dtype]).astype(np.int64)
    assert np.array_equal(got, c_fill(c_generator, seed, stream, 257, dtype))


# ---- specs ----------------------------------------------------------------------------


def test_list_problems_includes_dgemm_and_dgemv():
    names = list_problems()
    assert "dgemm" in names and "dgemv" in names
    assert names == sorted(names)


def test_unknown_problem_names_the_known_ones():
    with pytest.raises(UnknownProblem) as err:
        load_problem("dgemmm")
    message = str(err.value)
    assert "'dgemmm'" in message and "dgemm" in message and "dgemv" in message
    assert isinstance(err.value, ValueError)


def test_load_problem_fields():
    p = load_problem("dgemv")
    assert p.function == "dgemv"
    assert p.signature == "void dgemv(int n, const double *A, const double *x, double *y)"
    assert [a.name for a in p.inputs] == ["A", "x"] and p.output.name == "y"
    assert p.inputs[0].dims(5) == (5, 5) and p.inputs[1].dims(5) == (5,)
    assert "stdio.h" not in p.allowed_headers and "immintrin.h" in p.allowed_headers
    assert p.driver_path == paths.harness_dir() / "dgemv" / "driver.c"
    assert load_problem("dgemv") is p  # cached


_FINGERPRINTS = (
    "from lab.harness.problems import harness_fingerprint, load_problem; "
    "print(load_problem('dgemm').fingerprint(), load_problem('dgemv').fingerprint(), harness_fingerprint())"
)


def _fingerprints() -> tuple[str, str, str]:
    return load_problem("dgemm").fingerprint(), load_problem("dgemv").fingerprint(), harness_fingerprint()


def test_fingerprints_differ_between_problems_and_are_stable(tmp_path, monkeypatch):
    """Stable: the same in another process (another hash seed) and for a copy of the harness
    elsewhere with new modification times, as they hash names and contents only; and each
    changes with a byte of its own files, not with one of the others'."""
    here = _fingerprints()
    assert len(set(here)) == 3 and all(re.fullmatch(r"[0-9a-f]{16}", f) for f in here)
    other = subprocess.run(
        [sys.executable, "-c", _FINGERPRINTS],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        timeout=120,
    )
    assert other.returncode == 0, other.stderr
    assert tuple(other.stdout.split()) == here
    copy = tmp_path / "harness"
    shutil.copytree(paths.harness_dir(), copy, copy_function=shutil.copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("LAB_HARNESS_DIR", str(copy))
    load_problem.cache_clear()
    try:
        assert _fingerprints() == here
        with open(copy / "dgemm" / "driver.c", "a") as f:
            f.write("\n")
        dgemm, dgemv, harness = _fingerprints()
        assert dgemm != here[0] and (dgemv, harness) == here[1:]
        with open(copy / "bench.h", "a") as f:
            f.write("\n")
        assert _fingerprints()[:2] == (dgemm, dgemv) and _fingerprints()[2] != harness
    finally:
        load_problem.cache_clear()


def test_the_harness_folder_is_read_at_call_time(tmp_path, monkeypatch):
    """LAB_HARNESS_DIR, set after import, decides where problems come from."""
    import shutil

    shutil.copytree(paths.harness_dir() / "dgemv", tmp_path / "dgemv")
    shutil.copy(paths.harness_dir() / "bench.h", tmp_path / "bench.h")
    monkeypatch.setenv("LAB_HARNESS_DIR", str(tmp_path))
    load_problem.cache_clear()
    try:
        assert paths.harness_dir() == tmp_path and list_problems() == ["dgemv"]
        assert load_problem("dgemv").root == tmp_path / "dgemv"
        with pytest.raises(UnknownProblem):
            load_problem("dgemm")
    finally:
        load_problem.cache_clear()


def test_flops():
    assert load_problem("dgemm").flops(256) == 2 * 256**3
    assert load_problem("dgemm").flops(77) == 2 * 77**3
    assert load_problem("dgemv").flops(1024) == 2 * 1024**2
    assert type(load_problem("dgemm").flops(3)) is float


def test_bytes_count_each_array_once():
    """`bytes` of problem.toml: the compulsory traffic of one call, here equal to its arrays' sizes."""
    n = 100
    expected = {
        "dgemm": 3 * 8 * n**2,
        "dgemv": 8 * n**2 + 16 * n,
        "dot": 16 * n,
        "histogram": n + 256 * 8,
        "jacobi2d": 16 * n**2,
        "prefix_sum": 16 * n,
        "spmv": 4 * (n + 1) + (4 + 8) * 16 * n + 16 * n,
        "transpose": 16 * n**2,
    }
    assert set(expected) <= set(list_problems())
    for name, count in expected.items():
        problem = load_problem(name)
        assert problem.bytes(n) == count and type(problem.bytes(n)) is float, name
        # The working set (inputs and output by shape and type); DOT's scalar result is not traffic.
        assert problem.working_set(n) == count + (8 if name == "dot" else 0), name


def _problem_with(tmp_path, monkeypatch, edit):
    """Load a copy of dgemv whose problem.toml `edit` rewrote (the harness folder at tmp_path)."""
    import shutil

    shutil.copytree(paths.harness_dir() / "dgemv", tmp_path / "dgemv")
    spec = tmp_path / "dgemv" / "problem.toml"
    spec.write_text(edit(spec.read_text()))
    monkeypatch.setenv("LAB_HARNESS_DIR", str(tmp_path))
    load_problem.cache_clear()
    try:
        return load_problem("dgemv")
    finally:
        load_problem.cache_clear()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("", "bytes: missing"),
        ('bytes = "abs(n)"\n', "only arithmetic on n"),
        ('bytes = "n - n"\n', "not positive"),
        ('bytes = "8 * n **"\n', "bytes: "),
    ],
)
def test_a_bad_or_missing_bytes_key_is_a_one_line_load_error(tmp_path, monkeypatch, line, message):
    import re

    def edit(text):
        return re.sub(r'^bytes = ".*"\n', line, text, flags=re.M)

    with pytest.raises(BadProblem) as err:
        _problem_with(tmp_path, monkeypatch, edit)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
    assert str(err.value).startswith(str(tmp_path / "dgemv" / "problem.toml"))


# ---- the flop-formula compiler --------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "n", "expected"),
    [
        ("2 * n**3", 4, 128),
        ("n * (n + 1) // 2", 10, 55),
        ("-n + 3 * n - 1.5", 2, 2.5),
        ("n / 4", 2, 0.5),
    ],
)
def test_flops_formula_arithmetic(expr, n, expected):
    assert _compile_flops(expr)(n) == expected


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os')",
        "__import__('os').system('true')",
        "abs(n)",
        "m * 2",
        "n.bit_length()",
        "n.real",
        "(lambda: 1)()",
        "[n][0]",
        "n if n else 1",
    ],
)
def test_flops_formula_rejects_names_calls_and_other_syntax(expr):
    with pytest.raises(ValueError, match="only arithmetic on n"):
        _compile_flops(expr)


@pytest.mark.parametrize("expr", ["'a' * n", "'2' * n"])
def test_flops_formula_rejects_string_constants(expr):
    with pytest.raises(ValueError, match=r"only arithmetic on n"):
        _compile_flops(expr)


def test_flops_formula_syntax_error():
    with pytest.raises(SyntaxError):
        _compile_flops("2 * n **")


# ---- generate() against the C generator -----------------------------------------------


@pytest.mark.parametrize(
    ("seed", "stream", "count"),
    [
        (1, 0, 17),
        (1, 1, 17),
        (0, 0, 5),
        (1000003 * 42 + 6, 2, 300),
        (2**64 - 1, 0, 33),
        (2**63 + 12345, 7, 64),
    ],
)
def test_generate_matches_bench_fill_bit_for_bit(c_generator, seed, stream, count):
    want = c_fill(c_generator, seed, stream, count)
    got = generate(seed, stream, (count,))
    assert got.dtype == np.float64 and got.shape == (count,)
    assert got.tobytes() == want.tobytes()


def test_generate_shape_is_row_major_over_the_same_sequence(c_generator):
    flat = c_fill(c_generator, 9, 1, 12)
    assert np.array_equal(generate(9, 1, (3, 4)), flat.reshape(3, 4))


def test_generate_range_and_streams_differ():
    a, b = generate(5, 0, (4000,)), generate(5, 1, (4000,))
    assert a.min() >= -1.0 and a.max() < 1.0
    assert abs(a.mean()) < 0.05 and a.std() > 0.5
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, generate(6, 0, (4000,)))


# ---- inputs and reference -------------------------------------------------------------


def test_make_inputs_uses_one_stream_per_input():
    A, B = load_problem("dgemm").make_inputs(3, 6)
    assert A.shape == B.shape == (6, 6)
    assert np.array_equal(A, generate(3, 0, (6, 6))) and np.array_equal(B, generate(3, 1, (6, 6)))


def test_dgemm_reference_is_A_times_B():
    p = load_problem("dgemm")
    A, B = p.make_inputs(11, 7)
    naive = np.array([[sum(A[i, k] * B[k, j] for k in range(7)) for j in range(7)] for i in range(7)])
    assert np.array_equal(p.reference(11, 7), A @ B)
    assert np.allclose(p.reference(11, 7), naive, rtol=0, atol=1e-13)


def test_dgemv_reference_is_A_times_x():
    p = load_problem("dgemv")
    A, x = p.make_inputs(2, 9)
    assert x.shape == (9,)
    assert np.allclose(p.reference(2, 9), A @ x, rtol=0, atol=1e-14)


def _with_timed_n(lines: str):
    import re

    return lambda text: re.sub(r"^(default_n = .*\n)", lambda m: m.group(1) + lines, text, count=1, flags=re.M)


def test_timed_n_names_a_size_per_mode_and_default_n_stays_for_the_others(tmp_path, monkeypatch):
    import dataclasses

    from lab.config import MeasureConfig
    from lab.harness.evaluate import measure_command

    edit = _with_timed_n('timed_n = { serial = 2048 }\nsize_reason = "measured: 1.1x at 1024, 1.7x at 2048"\n')
    p = _problem_with(tmp_path, monkeypatch, edit)
    assert p.timed_n("serial") == 2048 and p.timed_n("openmp") == p.timed_n(None) == p.default_n == 1024
    assert "1.7x" in p.size_reason
    monkeypatch.delenv("LAB_HARNESS_DIR")
    assert load_problem("dgemv").timed_n("serial") == 1024  # no timed_n: default_n in every mode
    # What the measurer is asked to time follows the mode, unless the config names n itself.
    sized = dataclasses.replace(load_problem("dgemv"), timed_sizes=(("serial", 512),))
    argv = measure_command(sized, MeasureConfig(mode="serial"), "x")[0]
    assert argv[argv.index("--n") + 1] == "512"
    argv = measure_command(sized, MeasureConfig(mode="openmp"), "x")[0]
    assert argv[argv.index("--n") + 1] == "1024"
    argv = measure_command(sized, MeasureConfig(mode="serial", n=300), "x")[0]
    assert argv[argv.index("--n") + 1] == "300"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('timed_n = { gpu = 10 }\nsize_reason = "x"\n', "unknown execution model 'gpu'"),
        ('timed_n = { serial = -3 }\nsize_reason = "x"\n', "timed_n.serial: expected a positive integer"),
        ('timed_n = { serial = "big" }\nsize_reason = "x"\n', "timed_n.serial: expected a positive integer"),
        ("timed_n = { serial = 2048 }\n", "say why in size_reason"),
        ("timed_n = 2048\n", "expected a table"),
    ],
)
def test_a_bad_timed_n_is_a_one_line_load_error(tmp_path, monkeypatch, lines, message):
    with pytest.raises(BadProblem) as err:
        _problem_with(tmp_path, monkeypatch, _with_timed_n(lines))
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
