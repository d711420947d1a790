"""lab.harness.static_check: the source, preprocessed-text and compiled-object checks of candidate code.

The preprocessed and object checks run on real `gcc -E` / `gcc -c` output of small sources
written to tmp_path, with the flags lab/build.py uses for candidates.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lab.harness.problems import load_problem
from lab.harness.static_check import (
    candidate_lines,
    check_object,
    check_preprocessed,
    check_preprocessed_file,
    check_source,
    compiler_include_dirs,
    pragma_violation,
    strip_comments,
)

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


# ---- comments on include lines ----------------------------------------------------------


@pytest.mark.parametrize(
    "include",
    [
        "#include <stdlib.h>    // aligned_alloc, free",
        "#include <math.h> /* sqrt, fma */",
        "#include /* the vector intrinsics */ <immintrin.h>",
        "#include <string.h> /* memcpy\n   and memset */",
        "#include <omp.h>// threads",
        '#include <stdint.h> // it\'s int64_t, "quoted" /* nested */',
        "#include <stddef.h> /**/ // size_t",
        "%:include <float.h> // DBL_EPSILON",
        "#  include  <limits.h>  /* INT_MAX */",
    ],
)
def test_comments_after_an_allowed_include_pass(tmp_path, include):
    src = include + "\n" + BODY
    assert check_source(src, DGEMM) is None
    assert check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM) is None


@pytest.mark.parametrize(
    ("include", "needle"),
    [
        ("#include <stdio.h> // <stdlib.h>", "<stdio.h>"),
        ('#include "stdlib.h" // <stdlib.h>', '#include "stdlib.h" is not'),  # quoted: seen as written
        ('#include "std//lib.h"', '"std//lib.h"'),
        ("#include <std//lib.h>", "<std//lib.h>"),  # no comment inside a header name
        ("#include <stdlib.h/*x*/>", "<stdlib.h/*x*/>"),
        ("#define HDR <stdio.h>\n#include HDR // <stdlib.h>", "#include HDR is not"),
        ("#include <stdlib.h> extra // tokens", "<stdlib.h> extra"),
        ("#include_next <stdlib.h> // next", "#include_next <stdlib.h> is not"),
    ],
)
def test_comments_cannot_make_an_include_pass(include, needle):
    assert_forbidden(check_source(include + "\n" + BODY, DGEMM), needle)


def test_strip_comments_can_keep_string_literals():
    src = '#include "a.h" // c\nconst char *s = "x // y"; /* z */\n'
    out = strip_comments(src, keep_strings=True)
    assert len(out) == len(src)
    assert '#include "a.h"' in out and '"x // y"' in out
    assert "// c" not in out and "/* z */" not in out


# ---- system headers: the compiler's own include directories ------------------------------

HEADERS_SOURCE = "".join(f"#include <{h}>\n" for h in DGEMM.allowed_headers)


def _search_dirs(cc: str) -> list[str]:
    """`cc`'s `#include <...>` directories, in its search order."""
    err = subprocess.run([cc, "-xc", "-E", "-v", "-"], stdin=subprocess.DEVNULL, capture_output=True, text=True).stderr
    lines = err.splitlines()
    return [
        line.strip()
        for line in lines[lines.index("#include <...> search starts here:") + 1 : lines.index("End of search list.")]
    ]


@pytest.fixture(scope="module")
def prefix_toolchain(tmp_path_factory) -> Path:
    """A gcc installed in a prefix outside /usr and /opt, as conda installs one: a `bin/gcc`
    wrapper that runs the real gcc with -nostdinc and, as -isystem, copies of the real include
    directories (gcc's own first) holding the headers the allowed headers need."""
    prefix = tmp_path_factory.mktemp("toolchain") / "env"
    real = shutil.which("gcc")
    dirs = _search_dirs(real)
    (prefix / "src.c").parent.mkdir(parents=True)
    (prefix / "src.c").write_text(HEADERS_SOURCE)
    deps = subprocess.run(
        [real, *CFLAGS, "-M", str(prefix / "src.c")], capture_output=True, text=True, check=True
    ).stdout
    copies = [prefix / "lib" / "gcc" / "include", *(prefix / f"include{i}" for i in range(1, len(dirs)))]
    for dep in deps.replace("\\\n", " ").split()[2:]:
        dep = os.path.normpath(dep)
        home = max((d for d in dirs if dep.startswith(d + "/")), key=len)
        target = copies[dirs.index(home)] / os.path.relpath(dep, home)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(dep, target)
    gcc = prefix / "bin" / "gcc"
    gcc.parent.mkdir()
    isystem = " ".join(f"-isystem {c}" for c in copies)
    gcc.write_text(f'#!/bin/sh\nexec {real} -nostdinc {isystem} "$@"\n')
    gcc.chmod(0o755)
    return gcc


def preprocess_with(cc: Path, tmp_path: Path, source: str) -> str:
    (tmp_path / "candidate.c").write_text(source)
    subprocess.run([str(cc), *CFLAGS, "-E", "candidate.c", "-o", "candidate.i"], cwd=tmp_path, check=True)
    return (tmp_path / "candidate.i").read_text()


def test_compiler_include_dirs_are_the_compilers_search_list():
    dirs = compiler_include_dirs("gcc")
    found = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True, text=True).stdout.strip()
    assert os.path.realpath(found) in dirs and "/usr/include" in dirs
    assert compiler_include_dirs("gcc") is dirs  # asked once per compiler


def test_compiler_include_dirs_of_a_compiler_without_a_list_is_an_error(tmp_path):
    cc = tmp_path / "cc"
    cc.write_text("#!/bin/sh\nexit 0\n")
    cc.chmod(0o755)
    with pytest.raises(RuntimeError, match="no include directories"):
        compiler_include_dirs(str(cc))


def test_a_toolchain_in_another_prefix_has_its_headers_accepted(prefix_toolchain, tmp_path):
    src = HEADERS_SOURCE + BODY
    text = preprocess_with(prefix_toolchain, tmp_path, src)
    own, headers = candidate_lines(text, "candidate.c")
    assert len(headers) == len(DGEMM.allowed_headers)
    assert all(h.startswith(str(prefix_toolchain.parents[1])) for h in headers)  # none from /usr
    assert check_preprocessed(text, "candidate.c", DGEMM, cc=str(prefix_toolchain)) is None
    # The same headers are not system headers of the machine's own gcc.
    assert_forbidden(check_preprocessed(text, "candidate.c", DGEMM, cc="gcc"), "not an allowed header")
    # Serial mode still refuses omp.h, found where it may be.
    assert_forbidden(
        check_preprocessed(text, "candidate.c", DGEMM, openmp=False, cc=str(prefix_toolchain)), "in serial mode"
    )


def test_check_preprocessed_file_uses_the_given_compiler(prefix_toolchain, tmp_path):
    preprocess_with(prefix_toolchain, tmp_path, "#include <stdlib.h>\n" + BODY)
    path = tmp_path / "candidate.i"
    assert check_preprocessed_file(path, "candidate.c", DGEMM, True, str(prefix_toolchain)) is None
    assert_forbidden(check_preprocessed_file(path, "candidate.c", DGEMM), "not an allowed header")


@pytest.mark.parametrize("where", ["elsewhere", "inside the prefix, one folder down"])
def test_an_allowed_name_outside_the_compilers_dirs_stays_forbidden(prefix_toolchain, tmp_path, where):
    # A file named stdlib.h included by path: in a random folder, or in a subfolder of one of the
    # compiler's include dirs (where `#include <stdlib.h>` never finds it).
    folder = tmp_path / "random" if where == "elsewhere" else prefix_toolchain.parents[1] / "include1" / "sub"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stdlib.h").write_text("#define N 4\n")
    text = preprocess_with(prefix_toolchain, tmp_path, f'#include "{folder}/stdlib.h"\n' + BODY)
    assert_forbidden(check_preprocessed(text, "candidate.c", DGEMM, cc=str(prefix_toolchain)), "includes")


@pytest.mark.parametrize(
    "marker",
    [
        '# 1 "stdlib.h" 1',  # relative: a file of the work directory
        '# 1 "/usr/include/../../tmp/stdlib.h" 1',  # dots out of a system dir
        '# 1 "/usr/include/./sys/../../../etc/stdlib.h" 1',
        '# 1 "/usr/includes/stdlib.h" 1',  # a sibling folder whose name starts like one
    ],
)
def test_header_paths_that_only_look_like_system_headers_are_forbidden(marker):
    text = f'# 1 "candidate.c"\n{marker}\nint x;\n# 2 "candidate.c" 2\n' + BODY
    assert_forbidden(check_preprocessed(text, "candidate.c", DGEMM), "not an allowed header")


def test_header_paths_in_the_system_dirs_spelt_oddly_pass():
    text = '# 1 "candidate.c"\n# 1 "/usr/include//./stdlib.h" 1 3 4\nint x;\n# 2 "candidate.c" 2\n' + BODY
    assert check_preprocessed(text, "candidate.c", DGEMM) is None


# ---- OpenMP constructs: each permitted one, on real compiled objects ----------------------

SIG = "void dgemm(int n, const double *A, const double *B, double *C)"
#: Constructs honest kernels use: source, the libgomp entry points its object references (a
#: subset check: each is on the object check's allow-list, and takes only data, or a function
#: pointer only the compiler passes).
PERMITTED_OPENMP = {
    "parallel for simd inscan scan inclusive": (
        SIG + "{ double s = 0.0;\n#pragma omp parallel for simd reduction(inscan, +: s)\n"
        "for (int i = 0; i < n; i++) { s += A[i] * B[i];\n#pragma omp scan inclusive(s)\nC[i] = s; } }",
        {"GOMP_parallel", "GOMP_loop_start", "GOMP_loop_end_nowait", "malloc", "free"},
    ),
    "for inscan scan exclusive": (
        SIG + "{ double s = 0.0;\n#pragma omp parallel\n{\n#pragma omp for reduction(inscan, +: s)\n"
        "for (int i = 0; i < n; i++) { C[i] = s;\n#pragma omp scan exclusive(s)\ns += A[i]; } } }",
        {"GOMP_parallel", "GOMP_loop_start"},
    ),
    "master and masked filter": (
        SIG + "{\n#pragma omp parallel\n{\n#pragma omp master\nC[0] = A[0];\n#pragma omp barrier\n"
        "#pragma omp masked\nC[1] = B[0];\n#pragma omp masked filter(1)\nC[2] = n;\n} }",
        {"GOMP_parallel", "GOMP_barrier", "omp_get_thread_num"},
    ),
    "parallel master, parallel masked": (
        SIG + "{\n#pragma omp parallel master\nC[0] = A[0];\n#pragma omp parallel masked filter(0)\nC[1] = B[n - 1]; }",
        {"GOMP_parallel", "omp_get_thread_num"},
    ),
    "ordered threads": (
        SIG + "{\n#pragma omp parallel for ordered schedule(dynamic)\nfor (int i = 1; i < n; i++) {\n"
        "#pragma omp ordered threads\nC[i] = C[i - 1] + A[i]; } }",
        {"GOMP_parallel", "GOMP_loop_ordered_dynamic_start", "GOMP_ordered_start", "GOMP_ordered_end"},
    ),
    "ordered simd": (
        SIG
        + "{\n#pragma omp simd\nfor (int i = 1; i < n; i++) {\n#pragma omp ordered simd\nC[i] = C[i - 1] + A[i]; } }",
        set(),
    ),
    "ordered doacross": (
        SIG + "{\n#pragma omp parallel for ordered(1)\nfor (int i = 1; i < n; i++) {\n"
        "#pragma omp ordered depend(sink: i - 1)\nC[i] = C[i - 1] + A[i];\n#pragma omp ordered depend(source)\n} }",
        {"GOMP_loop_doacross_static_start", "GOMP_doacross_wait", "GOMP_doacross_post"},
    ),
    "taskloop grainsize": (
        SIG + "{\n#pragma omp parallel\n#pragma omp single\n#pragma omp taskloop grainsize(16)\n"
        "for (int i = 0; i < n; i++) C[i] = A[i] * B[i]; }",
        {"GOMP_parallel", "GOMP_single_start", "GOMP_taskloop"},
    ),
    "taskloop num_tasks nogroup priority in a taskgroup": (
        SIG + "{\n#pragma omp parallel\n#pragma omp single\n#pragma omp taskgroup\n{\n"
        "#pragma omp taskloop num_tasks(4) nogroup priority(1)\nfor (int i = 0; i < n; i++) C[i] = A[i]; } }",
        {"GOMP_taskloop", "GOMP_taskgroup_start", "GOMP_taskgroup_end"},
    ),
    "taskloop simd reduction, unsigned long long": (
        SIG + "{ double s = 0.0; unsigned long long m = n;\n#pragma omp parallel\n#pragma omp single\n"
        "#pragma omp taskloop simd reduction(+: s)\nfor (unsigned long long i = 0; i < m; i++) s += A[i];\nC[0] = s; }",
        {"GOMP_taskloop_ull", "GOMP_taskgroup_reduction_unregister"},
    ),
    "parallel master taskloop": (
        SIG + "{\n#pragma omp parallel master taskloop simd grainsize(32)\nfor (int i = 0; i < n; i++) C[i] = A[i];\n"
        "#pragma omp parallel masked taskloop num_tasks(2)\nfor (int i = 0; i < n; i++) C[i] += B[i]; }",
        {"GOMP_parallel", "GOMP_taskloop"},
    ),
    "task depend, taskwait depend, taskyield": (
        SIG + "{\n#pragma omp parallel\n#pragma omp single\n{\n#pragma omp task depend(out: C[0])\nC[0] = A[0];\n"
        "#pragma omp task depend(in: C[0]) depend(out: C[1])\nC[1] = C[0] + B[0];\n"
        "#pragma omp taskwait depend(in: C[1])\n#pragma omp taskyield\n#pragma omp taskwait\n} }",
        {"GOMP_task", "GOMP_taskwait_depend", "GOMP_taskyield", "GOMP_taskwait"},
    ),
    "taskgroup task_reduction, task in_reduction": (
        SIG
        + "{ double s = 0.0;\n#pragma omp parallel\n#pragma omp single\n#pragma omp taskgroup task_reduction(+: s)\n"
        "for (int i = 0; i < n; i += 16) {\n#pragma omp task in_reduction(+: s) firstprivate(i)\n"
        "for (int j = i; j < i + 16 && j < n; j++) s += A[j]; }\nC[0] = s; }",
        {"GOMP_taskgroup_reduction_register", "GOMP_task_reduction_remap", "GOMP_taskgroup_reduction_unregister"},
    ),
    "reduction task modifier on parallel, for, sections, scope": (
        SIG + "{ double s = 0.0, t = 0.0;\n#pragma omp parallel reduction(task, +: t)\n{\n#pragma omp single\n"
        "#pragma omp task in_reduction(+: t)\nt += A[0];\n}\n#pragma omp parallel\n{\n"
        "#pragma omp for reduction(task, +: s)\nfor (int i = 0; i < n; i++) s += A[i];\n"
        "#pragma omp sections reduction(task, +: s)\n{\n#pragma omp section\ns += B[0];\n#pragma omp section\ns += B[1];\n}\n"
        "#pragma omp scope reduction(task, +: s)\n{ s += 1.0; }\n}\nC[0] = s + t; }",
        {
            "GOMP_parallel_reductions",
            "GOMP_task_reduction_remap",
            "GOMP_loop_start",
            "GOMP_sections2_start",
            "GOMP_scope_start",
            "GOMP_workshare_task_reduction_unregister",
        },
    ),
    "declare simd on a helper": (
        "#pragma omp declare simd uniform(a) linear(i: 1) notinbranch simdlen(8)\n"
        "double twice(const double *a, int i) { return 2.0 * a[i]; }\n"
        "#pragma omp declare simd inbranch aligned(p: 64)\nstatic double inc(double *p, double v) { return v + *p; }\n"
        + SIG
        + "{\n#pragma omp simd\nfor (int i = 0; i < n; i++) C[i] = twice(A, i) + (B[i] > 0 ? B[i] : 0); }",
        set(),
    ),
    "declare simd on the required function": (
        "#pragma omp declare simd\n" + SIG + "{ for (int i = 0; i < n; i++) C[i] = A[i] + B[i]; }",
        set(),
    ),
    "declare reduction": (
        "typedef struct { double v; int i; } vi;\n"
        "#pragma omp declare reduction(maxloc: vi: omp_out = omp_in.v > omp_out.v ? omp_in : omp_out) "
        "initializer(omp_priv = omp_orig)\n"
        + SIG
        + "{ vi best = {A[0], 0};\n#pragma omp parallel for reduction(maxloc: best)\n"
        "for (int i = 0; i < n; i++) if (A[i] > best.v) { best.v = A[i]; best.i = i; }\nC[0] = best.i; (void)B; }",
        {"GOMP_parallel"},
    ),
    "flush": (
        SIG + "{\n#pragma omp parallel\n{\n#pragma omp flush\nC[0] = A[0];\n#pragma omp flush acq_rel\n"
        "#pragma omp flush(C)\n} (void)B; (void)n; }",
        {"GOMP_parallel"},
    ),
    "scope": (
        SIG
        + "{ double s = 0.0;\n#pragma omp parallel\n{\n#pragma omp scope private(s) nowait\n{ s = A[0]; C[1] = s; }\n} "
        "(void)B; (void)n; }",
        {"GOMP_parallel"},
    ),
    "loop bind order": (
        SIG
        + "{\n#pragma omp parallel loop bind(parallel) order(concurrent)\nfor (int i = 0; i < n; i++) C[i] = A[i];\n"
        "#pragma omp loop bind(thread)\nfor (int i = 0; i < n; i++) C[i] += B[i];\n"
        "#pragma omp loop bind(teams)\nfor (int i = 0; i < n; i++) C[i] *= 2.0; }",
        {"GOMP_parallel", "omp_get_num_teams", "omp_get_team_num"},
    ),
    "threadprivate copyin": (
        "static double scale = 1.0;\n#pragma omp threadprivate(scale)\n"
        + SIG
        + "{ scale = 2.0;\n#pragma omp parallel for copyin(scale)\nfor (int i = 0; i < n; i++) C[i] = scale * A[i] * B[i]; }",
        {"GOMP_parallel"},
    ),
}


def _undefined(obj: Path) -> set[str]:
    out = subprocess.run(["readelf", "-sW", str(obj)], capture_output=True, text=True, check=True).stdout
    return {p[7] for p in (line.split() for line in out.splitlines()) if len(p) >= 8 and p[6] == "UND"}


@pytest.mark.parametrize("name", list(PERMITTED_OPENMP))
def test_permitted_openmp_construct_passes_every_check(tmp_path, name):
    source, entry_points = PERMITTED_OPENMP[name]
    src = "#include <omp.h>\n" + source + "\n"
    assert check_source(src, DGEMM) is None
    assert check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM) is None
    obj = compile_object(tmp_path, src)
    assert entry_points <= _undefined(obj)
    assert check_object(obj, DGEMM) is None
    # Serial mode: still no OpenMP at all.
    assert_forbidden(check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM, openmp=False), "serial mode")


def test_declare_simd_clones_of_the_required_function_are_localized(tmp_path):
    from lab.harness.build import localize_argv

    obj = compile_object(tmp_path, PERMITTED_OPENMP["declare simd on the required function"][0] + "\n")
    out = subprocess.run(["readelf", "-sW", str(obj)], capture_output=True, text=True, check=True).stdout
    clones = {p[7] for p in (line.split() for line in out.splitlines()) if len(p) >= 8 and p[7].startswith("_ZGV")}
    assert clones and all(c.endswith("_dgemm") for c in clones)  # e.g. _ZGVdN8vvvv_dgemm
    assert check_object(obj, DGEMM) is None
    subprocess.run(localize_argv("dgemm", str(obj), str(tmp_path / "local.o")), check=True)
    out = subprocess.run(["readelf", "-sW", str(tmp_path / "local.o")], capture_output=True, text=True).stdout
    exported = {
        p[7] for p in (line.split() for line in out.splitlines()) if len(p) >= 8 and p[4] == "GLOBAL" and p[6] != "UND"
    }
    assert exported == {"dgemm"}


#: Constructs that stay refused, and the word the check names.
REFUSED_OPENMP = {
    "target teams distribute parallel for": "target",
    "teams num_teams(2)": "teams",
    "distribute": "distribute",
    "parallel proc_bind(spread)": "proc_bind",
    "task affinity(A[0])": "affinity",
    "parallel thread_limit(2)": "thread_limit",
    "cancel for": "cancel",
    "cancellation point for": "cancellation",
    'error at(execution) message("x")': "error",
    "allocate(x) allocator(omp_default_mem_alloc)": "allocate",
    "task detach(ev)": "detach",
    "depobj(o) depend(in: x)": "depobj",
    "declare target": "target",
    "declare variant(f) match(construct={parallel})": "variant",
    "declare mapper(m: struct s v) map(v)": "mapper",
    "declare": "declare",
    "parallel declare simd": "declare",
    "requires unified_shared_memory": "requires",
    "metadirective default(parallel)": "metadirective",
    "interop init(targetsync: o)": "interop",
}


@pytest.mark.parametrize("pragma", list(REFUSED_OPENMP))
def test_refused_openmp_constructs_stay_forbidden(pragma):
    assert_forbidden(pragma_violation("omp " + pragma), REFUSED_OPENMP[pragma])


@pytest.mark.parametrize(
    ("pragma", "symbol"),
    [
        (
            "parallel\n{\n#pragma omp for\nfor (int i = 0; i < n; i++) { C[i] = A[i];\n#pragma omp cancel for\n} }",
            "GOMP_cancel",
        ),
        ('error at(execution) severity(warning) message("hi")', "GOMP_warning"),
        ("teams num_teams(2)\n{ C[0] = A[0]; }", "GOMP_teams"),
    ],
)
def test_refused_openmp_constructs_are_forbidden_in_the_object_too(tmp_path, pragma, symbol):
    # The object check alone refuses them as well (the runtime entry points they compile to).
    src = SIG + "{\n#pragma omp " + pragma + "\n (void)B; (void)n; }\n"
    assert_forbidden(check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM), "#pragma omp")
    v = check_object(compile_object(tmp_path, src), DGEMM)
    assert_forbidden(v, "references " + symbol)


def test_openmp_clause_names_are_not_calls_but_their_arguments_are_code():
    # `bind` is the loop clause here, not the socket call; what a clause's parentheses hold is code.
    src = SIG + "{\n#pragma omp parallel loop bind(parallel)\nfor (int i = 0; i < n; i++) C[i] = A[i] * B[i]; }\n"
    assert check_source(src, DGEMM) is None
    hidden = src.replace("bind(parallel)", 'if(system("ls"))')
    assert_forbidden(check_source(hidden, DGEMM), "uses system")
    assert_forbidden(
        check_source(
            "#include <stdlib.h>\n" + src.replace("loop bind(parallel)", "for") + "int bind(int);\n"
            "static int f(void) { return bind(0); }\n",
            DGEMM,
        ),
        "uses bind",
    )


@pytest.mark.parametrize(
    "helper",
    [
        "static double times(double a, double b) { return a * b; }",
        "static inline double\ntimes(double a, double b)\n{\n    return a * b;\n}",
        "static __attribute__((noinline)) double times(double a, double b) { return a * b; }",
        "#pragma omp declare simd notinbranch\nstatic double times(double a, double b) { return a * b; }",
    ],
)
def test_a_static_helper_named_like_a_libc_function_is_its_own(tmp_path, helper):
    # The calls reach the candidate's own static function, never libc's `times`.
    src = helper + "\n" + BODY.replace("s += A[i * n + k] * B[k * n + j]", "s += times(A[i * n + k], B[k * n + j])")
    assert check_source(src, DGEMM) is None
    assert check_preprocessed(preprocess(tmp_path, src), "candidate.c", DGEMM) is None
    assert check_object(compile_object(tmp_path, src), DGEMM) is None


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        # Not static: it would interpose libc's (the object check says so too).
        ("double times(double a, double b) { return a * b; }\n", "uses times"),
        # A static function of another name does not make a libc call the candidate's own.
        ('static int helper(void) { return 0; }\nstatic int g(void) { return system("ls"); }\n', "uses system"),
        # A GNU nested function is not static: the call at file scope is libc's.
        (
            "void f(void) { int system(const char *c) { return c[0]; } (void)system; }\n"
            'static int g(void) { return system("ls"); }\n',
            "uses system",
        ),
        ("static int main(void) { return 0; }\n", "uses main"),  # the runner's names stay refused
    ],
)
def test_calls_of_libc_functions_the_candidate_does_not_define_static_stay_forbidden(source, needle):
    assert_forbidden(check_source(source + BODY, DGEMM), needle)


def test_function_definitions_are_read_in_one_pass():
    # 64 KiB of `f(f(f(...`: a backtracking regex over it took seconds; one pass takes milliseconds.
    import time

    start = time.monotonic()
    assert check_source("f(" * 32000, DGEMM) is None
    assert time.monotonic() - start < 1.5
