"""lab.harness.static_check: the source, preprocessed-text and compiled-object checks of candidate code.

The preprocessed and object checks run on real `gcc -E` / `gcc -c` output of small sources
written to tmp_path, with the flags lab/build.py uses for candidates.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lab.harness.problems import load_problem
from lab.harness.static_check import candidate_lines, check_object, check_preprocessed, check_source, strip_comments

DGEMM = load_problem("dgemm")
CFLAGS = ["-O3", "-march=native", "-fopenmp"]
CANDIDATE_ONLY = ["-std=gnu11", "-fno-jump-tables", "-fno-common"]

BODY = """void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
"""


def assert_forbidden(violation, *needles: str) -> None:
    assert violation is not None and violation.status == "forbidden", violation
    for needle in needles:
        assert needle in violation.detail


# ---- check_source: includes -----------------------------------------------------------


@pytest.mark.parametrize("header", DGEMM.allowed_headers)
def test_allowed_include_passes(header):
    assert check_source(f"#include <{header}>\n" + BODY, DGEMM) is None


def test_several_allowed_includes_and_spacing_pass():
    src = "#include <stdlib.h>\n  #  include<immintrin.h>\n#include < omp.h >\n" + BODY
    assert check_source(src, DGEMM) is None


@pytest.mark.parametrize(
    ("include", "needle"),
    [
        ("#include <stdio.h>", "<stdio.h>"),
        ('#include "local.h"', '"local.h"'),
        ('#include "../harness/bench.h"', "../harness/bench.h"),
        ("#include <sys/syscall.h>", "<sys/syscall.h>"),
        ("#include </etc/passwd>", "/etc/passwd"),
        ("#define HDR <stdio.h>\n#include HDR", "#include HDR"),
        ("#include_next <stdlib.h>", "#include_next"),
        ("#import <stdlib.h>", "#import"),
        ("#include \\\n<stdio.h>", "<stdio.h>"),
        ("#inc\\\nlude <stdio.h>", "<stdio.h>"),
        ("#\\\ninclude <stdio.h>", "<stdio.h>"),
    ],
)
def test_disallowed_include_fails(include, needle):
    assert_forbidden(check_source(include + "\n" + BODY, DGEMM), needle)


def test_disallowed_include_message_lists_allowed_headers():
    v = check_source("#include <stdio.h>\n" + BODY, DGEMM)
    assert v.detail.startswith("includes <stdio.h>, which is not allowed (allowed: stddef.h, ")


def test_embed_is_forbidden():
    assert_forbidden(check_source('static const char d[] = {\n#embed "/etc/passwd"\n};\n' + BODY, DGEMM), "#embed")


@pytest.mark.parametrize(
    "hidden",
    [
        "/* #include <stdio.h> */",
        "// #include <stdio.h>",
        "/*\n#include <stdio.h>\n*/",
        '// see "local.h" for details',
    ],
)
def test_include_inside_comment_does_not_count(hidden):
    assert check_source(hidden + "\n#include <stdlib.h>\n" + BODY, DGEMM) is None


def test_include_after_string_with_comment_opener_is_caught():
    src = 'static const char *a = "/*";\n#include <stdio.h>\nstatic const char *b = "*/";\n' + BODY
    assert_forbidden(check_source(src, DGEMM), "stdio.h")


# ---- check_source: asm, calls, BLAS, attributes ---------------------------------------


@pytest.mark.parametrize("asm", ['asm("nop");', '__asm__ volatile ("syscall");', '__asm ("nop");'])
def test_inline_asm_is_forbidden(asm):
    src = BODY.replace("double s = 0.0;", "double s = 0.0; " + asm)
    assert_forbidden(check_source(src, DGEMM), "inline assembly")


@pytest.mark.parametrize(
    ("call", "name"),
    [
        ('system("ls");', "system"),
        ("fork();", "fork"),
        ('fopen("/tmp/x", "w");', "fopen"),
        ("struct timespec ts; clock_gettime(0, &ts);", "clock_gettime"),
        ("exit(0);", "exit"),
        ("exit (0);", "exit"),
        ('printf("%d", n);', "printf"),
        ("omp_get_wtime();", "omp_get_wtime"),
        ("syscall(1, 1, 0, 0);", "syscall"),
    ],
)
def test_forbidden_call(call, name):
    src = "#include <stdlib.h>\n" + BODY.replace("C[i * n + j] = s;", "C[i * n + j] = s; " + call)
    assert_forbidden(check_source(src, DGEMM), f"uses {name},")


def test_forbidden_function_declared_by_hand():
    assert_forbidden(check_source("extern int getpid(void);\n" + BODY, DGEMM), "getpid")


def test_variables_named_like_forbidden_functions_are_allowed():
    src = BODY.replace("double s = 0.0;", "double s = 0.0; int time = n, read = 1; double exit_code = time * read;")
    assert check_source(src, DGEMM) is None


@pytest.mark.parametrize(
    "name",
    ["cblas_dgemm", "dgemm_", "openblas_set_num_threads", "sgemv_", "daxpy_", "LAPACKE_dgesv", "mkl_set_num_threads"],
)
def test_blas_names_are_forbidden(name):
    src = BODY.replace("double s = 0.0;", f"double s = 0.0; {name}(n);")
    assert_forbidden(check_source(src, DGEMM), f"BLAS ({name})")


def test_blas_name_forbidden_even_without_a_call():
    src = "static void *p = (void *)&cblas_dgemm;\n" + BODY
    assert_forbidden(check_source(src, DGEMM), "BLAS (cblas_dgemm)")


@pytest.mark.parametrize(
    "attribute",
    [
        "__attribute__((constructor)) static void init(void) {}",
        "__attribute__((destructor)) static void fini(void) {}",
        '__attribute__((ifunc("resolve"))) void other(void);',
        '__attribute__((section(".init_array"))) static void (*p)(void) = 0;',
        '__attribute__((alias("dgemm"))) void other(int, const double *, const double *, double *);',
        "__attribute__((__constructor__(101))) static void init(void) {}",
        "__attribute__ ((noinline, constructor)) static void init(void) {}",
    ],
)
def test_forbidden_attributes(attribute):
    assert_forbidden(check_source(attribute + "\n" + BODY, DGEMM), "__attribute__")


def test_harmless_attributes_are_allowed():
    src = (
        "__attribute__((noinline, hot)) static double dot(const double *a, const double *b) { return *a * *b; }\n"
        "static double buf[8] __attribute__((aligned(64)));\n" + BODY
    )
    assert check_source(src, DGEMM) is None


@pytest.mark.parametrize(
    "text",
    [
        '/* system("rm -rf /"); fork(); cblas_dgemm(); */',
        '// exit(1); asm("syscall"); __attribute__((constructor))',
        'static const char *msg = "call fork() then exit(0) via cblas_dgemm";',
        "static const char c = '(';",
    ],
)
def test_names_in_comments_and_strings_are_ignored(text):
    assert check_source(text + "\n" + BODY, DGEMM) is None


def test_strip_comments_keeps_line_count():
    src = 'int a; /* one\ntwo\nthree */ int b;\n// line\nconst char *s = "x // y /* z";\nchar q = \'"\';\n/**/int c;\n'
    out = strip_comments(src)
    assert out.count("\n") == src.count("\n")
    assert "one" not in out and "line" not in out and "x // y" not in out
    assert "int a;" in out and "int b;" in out and "int c;" in out


def test_strip_comments_keeps_line_count_with_continuations():
    src = "#define X \\\n  1\nint a = X;\n"
    assert strip_comments(src).count("\n") == src.count("\n")


# ---- check_preprocessed (real gcc -E output) ------------------------------------------


def preprocess(tmp_path: Path, source: str, **extra_files: str) -> str:
    for name, text in extra_files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "candidate.c").write_text(source)
    subprocess.run(
        ["gcc", *CFLAGS, "-E", "candidate.c", "-o", "candidate.i"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    return (tmp_path / "candidate.i").read_text()


def test_preprocessed_clean_kernel_passes(tmp_path):
    text = preprocess(tmp_path, "#include <stdlib.h>\n#include <omp.h>\n#include <immintrin.h>\n" + BODY)
    assert check_preprocessed(text, "candidate.c", DGEMM) is None


def test_token_pasting_is_caught_after_expansion(tmp_path):
    src = "#include <stdlib.h>\n#define P(a, b) a##b\n" + BODY.replace(
        "C[i * n + j] = s;", 'C[i * n + j] = s; P(sys, tem)("ls");'
    )
    assert check_source(src, DGEMM) is None  # the raw text never spells the name...
    text = preprocess(tmp_path, src)
    assert_forbidden(check_preprocessed(text, "candidate.c", DGEMM), "system")  # ...its expansion does


def test_token_pasted_asm_is_caught(tmp_path):
    src = "#define P(a, b) a##b\n" + BODY.replace("double s = 0.0;", 'double s = 0.0; P(__as, m__)("nop");')
    assert check_source(src, DGEMM) is None
    assert_forbidden(check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM), "inline assembly")


def test_macro_computed_include_is_caught(tmp_path):
    text = preprocess(tmp_path, "#define HDR <stdio.h>\n#include HDR\n" + BODY)
    assert_forbidden(check_preprocessed(text, "candidate.c", DGEMM), "stdio.h")


def test_local_header_is_caught_even_with_an_allowed_name(tmp_path):
    text = preprocess(tmp_path, '#include "stdlib.h"\n' + BODY, **{"stdlib.h": "#define N 4\n"})
    v = check_preprocessed(text, "candidate.c", DGEMM)
    assert_forbidden(v, "includes stdlib.h")


def test_headers_declaring_forbidden_functions_are_not_the_candidates_lines(tmp_path):
    # stdlib.h declares system(), exit(), getenv()...; only the candidate's own lines are checked.
    text = preprocess(tmp_path, "#include <stdlib.h>\n#include <string.h>\n" + BODY)
    assert "system" in text
    assert check_preprocessed(text, "candidate.c", DGEMM) is None


def test_candidate_lines_returns_own_lines_and_direct_headers(tmp_path):
    src = (
        "#include <stdlib.h>\n#include <math.h>\n#define SQ(x) ((x) * (x))\nstatic double sq(double v) { return SQ(v); }\n"
        + BODY
    )
    own, headers = candidate_lines(preprocess(tmp_path, src), "candidate.c")
    assert [Path(h).name for h in headers] == ["stdlib.h", "math.h"]
    assert all(h.startswith("/usr/") for h in headers)
    assert "static double sq(double v) { return ((v) * (v)); }" in own
    assert "void dgemm(int n, const double *A, const double *B, double *C) {" in own
    assert "malloc" not in own and "sqrt" not in own  # declarations of the headers are left out
    assert "features.h" not in " ".join(headers)  # nested includes are not direct headers


def test_line_directive_cannot_hide_the_candidates_lines(tmp_path):
    src = '#include <stdlib.h>\n#define P(a, b) a##b\n#line 1 "elsewhere.h"\n' + BODY.replace(
        "C[i * n + j] = s;", 'C[i * n + j] = s; P(sys, tem)("ls");'
    )
    assert_forbidden(check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM), "system")


# ---- check_object (real gcc -c objects) -----------------------------------------------


def compile_object(tmp_path: Path, source: str) -> Path:
    (tmp_path / "candidate.c").write_text(source)
    obj = tmp_path / "candidate.o"
    subprocess.run(
        ["gcc", *CFLAGS, *CANDIDATE_ONLY, "-c", "candidate.c", "-o", obj.name],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    return obj


CLEAN = """#include <stdlib.h>
#include <string.h>
#include <math.h>
static void zero(double *C, int n) { memset(C, 0, sizeof(double) * (size_t)n * (size_t)n); }
void dgemm(int n, const double *A, const double *B, double *C) {
    zero(C, n);
    double *t = malloc(sizeof(double) * (size_t)n);
    #pragma omp parallel for
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++) C[i * n + j] += A[i * n + k] * B[k * n + j];
    if (t) t[0] = sqrt(fabs(C[0]));
    free(t);
}
"""


def test_clean_kernel_object_passes(tmp_path):
    assert check_object(compile_object(tmp_path, CLEAN), DGEMM) is None


def test_exported_helpers_and_globals_pass(tmp_path):
    # Localized at link time (objcopy --keep-global-symbol): an exported helper reaches no one.
    src = "int counter;\nvoid helper(double *C) { C[0] = 1.0; }\n" + BODY.replace(
        "double s = 0.0;", "double s = counter++;"
    )
    assert check_object(compile_object(tmp_path, src), DGEMM) is None


@pytest.mark.parametrize("name", ["memcpy", "malloc", "omp_get_thread_num", "GOMP_parallel", "main", "random"])
def test_definition_that_would_interpose_a_library_symbol_is_forbidden(tmp_path, name):
    src = f"void *{name}(void) {{ return 0; }}\n" + BODY
    assert_forbidden(check_object(compile_object(tmp_path, src), DGEMM), f"defines {name}")


def test_static_dgemm_is_a_format_error(tmp_path):
    obj = compile_object(tmp_path, "static " + BODY)
    v = check_object(obj, DGEMM)
    assert v is not None and v.status == "format_error" and "not exported" in v.detail


def test_undeclared_function_reference_is_forbidden(tmp_path):
    src = "extern int getpid(void);\n" + BODY.replace("double s = 0.0;", "double s = getpid();")
    assert_forbidden(check_object(compile_object(tmp_path, src), DGEMM), "references getpid")


def test_blas_reference_is_forbidden(tmp_path):
    src = (
        "extern void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,"
        " const double *, const int *, const double *, const int *, const double *, double *, const int *);\n"
        "void dgemm(int n, const double *A, const double *B, double *C) {\n"
        "    double one = 1.0, zero = 0.0;\n"
        '    dgemm_("N", "N", &n, &n, &n, &one, B, &n, A, &n, &zero, C, &n);\n}\n'
    )
    assert_forbidden(check_object(compile_object(tmp_path, src), DGEMM), "BLAS (dgemm_)")


def test_indirect_call_through_volatile_pointer_is_forbidden(tmp_path):
    src = (
        "static void fill(double *C, int n) { for (int i = 0; i < n * n; i++) C[i] = 0.0; }\n"
        "static void (*volatile fp)(double *, int) = fill;\n"
        "void dgemm(int n, const double *A, const double *B, double *C) { (void)A; (void)B; fp(C, n); }\n"
    )
    v = check_object(compile_object(tmp_path, src), DGEMM)
    assert_forbidden(v, "indirect branches")
    assert "call" in v.detail or "jmp" in v.detail


def test_constructor_section_is_caught_by_the_object_check_alone(tmp_path):
    src = (
        "static volatile int ready;\n__attribute__((constructor)) static void init(void) { ready = 1; }\n"
        + BODY.replace("double s = 0.0;", "double s = ready;")
    )
    assert_forbidden(check_object(compile_object(tmp_path, src), DGEMM), "has section .init_array")


def test_ifunc_is_forbidden(tmp_path):
    src = (
        "static void impl(int n, const double *A, const double *B, double *C) { C[0] = A[0] * B[0] * n; }\n"
        "static void *resolve(void) { return (void *)impl; }\n"
        'void dgemm(int n, const double *A, const double *B, double *C) __attribute__((ifunc("resolve")));\n'
    )
    assert_forbidden(check_object(compile_object(tmp_path, src), DGEMM), "ifunc")


# ---- pragmas and builtins that ordinary code uses ----------------------------------------


@pytest.mark.parametrize(
    "pragma",
    [
        "GCC unroll 4",
        "GCC ivdep",
        "unroll",
        "unroll(8)",
        "nounroll",
        "ivdep",
        "vector aligned",
        "clang loop vectorize(enable)",
    ],
)
def test_loop_hint_pragmas_of_other_compilers_are_allowed(tmp_path, pragma):
    src = BODY.replace("for (int k", f"\n#pragma {pragma}\n            for (int k")
    assert check_source(src, DGEMM) is None
    assert check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM) is None


@pytest.mark.parametrize("pragma", ["weak dgemm", "redefine_extname a b", "GCC visibility push(default)", "omp target"])
def test_pragmas_that_change_symbols_or_offload_stay_forbidden(tmp_path, pragma):
    src = f"#pragma {pragma}\n" + BODY
    assert_forbidden(check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM), "#pragma")


@pytest.mark.parametrize("builtin", ["exp", "log", "pow", "lround", "llrint", "nearbyint", "expf", "labs"])
def test_math_builtins_are_allowed(builtin):
    src = f"static double f(double x) {{ return (double)__builtin_{builtin}(x{', x' if builtin == 'pow' else ''}); }}\n"
    assert check_source(src + BODY, DGEMM) is None


# ---- serial mode: no OpenMP at any level ------------------------------------------------

SERIAL_ATTACKS = {
    "pragma": BODY.replace("for (int i", "\n#pragma omp parallel for\n    for (int i"),
    "simd pragma": BODY.replace("for (int k", "\n#pragma omp simd reduction(+:s)\n            for (int k"),
    "_Pragma in a macro": '#define PAR _Pragma("omp parallel for")\n'
    + BODY.replace("for (int i", "PAR\n    for (int i"),
    "spliced pragma": BODY.replace("for (int i", "\n#pragma \\\nomp parallel for\n    for (int i"),
    "omp.h": "#include <omp.h>\n" + BODY,
    "runtime call": BODY.replace("double s = 0.0;", "double s = 0.0 * omp_get_num_threads();"),
}


@pytest.mark.parametrize("name", SERIAL_ATTACKS)
def test_openmp_is_forbidden_in_serial_mode(tmp_path, name):
    src = SERIAL_ATTACKS[name]
    if "omp_get" in src:
        src = "int omp_get_num_threads(void);\n" + src
    text_verdict = check_source(src, DGEMM, openmp=False)
    if text_verdict is None:  # hidden from the text: the expansion must catch it
        text_verdict = check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM, openmp=False)
    assert_forbidden(text_verdict, "serial mode")
    assert (check_source(src, DGEMM) is None) or name == "omp.h"  # the same code is fine with OpenMP


def test_openmp_reference_in_the_object_is_forbidden_in_serial_mode(tmp_path):
    obj = compile_object(tmp_path, BODY.replace("for (int i", "\n#pragma omp parallel for\n    for (int i"))
    assert check_object(obj, DGEMM) is None
    assert_forbidden(check_object(obj, DGEMM, openmp=False), "serial mode")


def test_serial_mode_accepts_plain_and_simd_intrinsic_code(tmp_path):
    src = "#include <immintrin.h>\n" + BODY.replace("for (int k", "\n#pragma GCC unroll 4\n            for (int k")
    assert check_source(src, DGEMM, openmp=False) is None
    assert check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM, openmp=False) is None
    assert check_object(compile_object(tmp_path, src), DGEMM, openmp=False) is None


_OBJECT_CASES = {
    # A runtime call that starts no threads is not OpenMP; a parallel loop is.
    "wtime only": ("#include <omp.h>\ndouble f(void){return omp_get_wtime();}", {"openmp": False, "simd": False}),
    "parallel for": (
        "void f(int n,double*x){\n#pragma omp parallel for\nfor(int i=0;i<n;i++)x[i]+=1;}",
        {"openmp": True, "simd": False},
    ),
    # SIMD that is not double arithmetic: int64 lanes, and a transpose that only shuffles.
    "int64 lanes": (
        "#include <immintrin.h>\nvoid f(long long*x){__m256i a=_mm256_loadu_si256((void*)x);"
        "_mm256_storeu_si256((void*)x,_mm256_add_epi64(a,a));}",
        {"openmp": False, "simd": True},
    ),
    "shuffle only": (
        "#include <immintrin.h>\nvoid f(double*x){__m256d a=_mm256_loadu_pd(x),b=_mm256_loadu_pd(x+4);"
        "_mm256_storeu_pd(x,_mm256_unpacklo_pd(a,b));_mm256_storeu_pd(x+4,_mm256_unpackhi_pd(a,b));}",
        {"openmp": False, "simd": True},
    ),
    "horizontal add": (
        "#include <immintrin.h>\nvoid f(double*x){__m256d a=_mm256_loadu_pd(x);_mm256_storeu_pd(x,_mm256_hadd_pd(a,a));}",
        {"openmp": False, "simd": True},
    ),
    # Scalar code that uses vector registers all the same: fabs, negation, a large copy.
    "scalar": (
        "#include <math.h>\n#include <string.h>\nstruct S{double v[64];};\n"
        "void f(int n,double*x,struct S*a,const struct S*b){for(int i=0;i<n;i++)x[i]=-fabs(x[i]);*a=*b;"
        "memset(x,0,512);}",
        {"openmp": False, "simd": False},
    ),
}


@pytest.mark.parametrize("name", list(_OBJECT_CASES))
def test_object_facts_read_threads_and_explicit_simd_from_the_object(tmp_path, name):
    from lab.harness.build import NO_AUTOVECTORIZE
    from lab.harness.static_check import object_facts

    source, facts = _OBJECT_CASES[name]
    (tmp_path / "k.c").write_text(source)
    flags = ["gcc", "-O3", "-march=native", "-fopenmp", "-c", str(tmp_path / "k.c")]
    subprocess.run([*flags, "-o", str(tmp_path / "k.o")], check=True, timeout=60)
    subprocess.run([*flags, *NO_AUTOVECTORIZE, "-o", str(tmp_path / "novec.o")], check=True, timeout=60)
    assert object_facts(tmp_path / "k.o", tmp_path / "novec.o") == facts
