"""lab.harness.extract: completion text -> the C source defining the required function, or FormatError."""

from __future__ import annotations

import pytest

from lab.harness.extract import FormatError, code_blocks, extract_source
from lab.harness.problems import load_problem

DGEMM = load_problem("dgemm").signature
DGEMV = load_problem("dgemv").signature

KERNEL = """#include <stddef.h>
void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
"""


def fenced(code: str, lang: str = "c") -> str:
    return f"```{lang}\n{code}```\n"


# ---- raw C and chat answers ------------------------------------------------------------


def test_raw_c_is_returned_whole():
    assert extract_source(KERNEL, DGEMM) == KERNEL


def test_chat_answer_with_c_block():
    answer = "Here is a fast kernel:\n\n" + fenced(KERNEL) + "\nIt uses a simple triple loop."
    assert extract_source(answer, DGEMM) == KERNEL


@pytest.mark.parametrize("lang", ["c", "C", "c11", ""])
def test_c_like_fence_labels(lang):
    assert extract_source("Answer:\n" + fenced(KERNEL, lang), DGEMM) == KERNEL


@pytest.mark.parametrize("lang", ["python", "bash", "cpp"])
def test_blocks_in_other_languages_are_ignored(lang):
    answer = "Compile it like this:\n" + fenced(KERNEL, lang)
    assert code_blocks(answer) == []
    with pytest.raises(FormatError, match="no definition of dgemm"):
        extract_source(answer, DGEMM)


def test_c_block_after_other_languages_is_found():
    answer = (
        fenced("gcc -O3 -fopenmp dgemm.c\n", "bash")
        + fenced("import numpy as np\nC = A @ B\n", "python")
        + fenced("void dgemm(int n, const double *A, const double *B, double *C) { /* cpp */ }\n", "cpp")
        + "And the C version:\n"
        + fenced(KERNEL)
    )
    assert extract_source(answer, DGEMM) == KERNEL


def test_first_c_block_defining_the_function_wins():
    helper = "static inline double dot(const double *a, const double *b, int n) { return a[0] * b[0] * n; }\n"
    first = "void dgemm(int n, const double *A, const double *B, double *C) { /* first */ }\n"
    second = "void dgemm(int n, const double *A, const double *B, double *C) { /* second */ }\n"
    answer = fenced(helper) + "Now the kernel:\n" + fenced(first) + "An alternative:\n" + fenced(second)
    assert extract_source(answer, DGEMM) == first


def test_truncated_completion_without_closing_fence_is_extracted():
    cut = "Sure!\n```c\n" + KERNEL + "\n// and now a micro-kernel for the tail that"
    source = extract_source(cut, DGEMM)
    assert source.startswith("#include <stddef.h>\nvoid dgemm(")
    assert source.endswith("for the tail that")


def test_prototype_followed_by_definition():
    code = (
        "void dgemm(int n, const double *A, const double *B, double *C);\n"
        "static void helper(int n) { (void)n; }\n" + KERNEL
    )
    assert extract_source(code, DGEMM) == code


# ---- signature matching ---------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "void dgemm(int n, const double *A, const double *B, double *C)",
        "void dgemm(int size, const double *a, const double *b, double *c)",
        "void dgemm(int n, const double *restrict A, const double *restrict B, double *restrict C)",
        "void dgemm(int n, const double * __restrict__ A, const double * __restrict__ B, double * __restrict__ C)",
        "void dgemm(int n, double A[], double B[], double C[])",
        "void dgemm(const int n, double *A, double *B, double *C)",
        "void dgemm(int n,\n           const double *A,\n           const double *B,\n           double *C)",
        "void\ndgemm(int n, const double* A, const double* B, double* C)",
    ],
)
def test_signature_ignores_names_and_qualifiers(header):
    code = header + " { C[0] = A[0] * B[0] * n; }\n"
    assert extract_source(code, DGEMM) == code


@pytest.mark.parametrize(
    ("header", "needle"),
    [
        ("double dgemm(int n, const double *A, const double *B, double *C)", "-> double"),
        ("void dgemm(int n, const float *A, const float *B, float *C)", "float*"),
        ("void dgemm(long n, const double *A, const double *B, double *C)", "(long,"),
        ("void dgemm(int n, const double *A, const double *B)", "(int, double*, double*) -> void"),
        ("void dgemm(const double *A, const double *B, double *C)", "(double*, double*, double*) -> void"),
        ("void dgemm(int n, const double *A, const double *B, double *C, int lda)", "double*, int) -> void"),
        ("void dgemm(void)", "() -> void"),
        ("double *dgemm(int n, const double *A, const double *B)", "-> double*"),
    ],
)
def test_wrong_signature_raises_with_useful_message(header, needle):
    code = header + " { return 0; }\n"
    with pytest.raises(FormatError) as err:
        extract_source(code, DGEMM)
    message = str(err.value)
    assert needle in message
    assert "dgemm()" in message and "required: " + DGEMM in message


def test_wrong_function_name_raises():
    code = "void matmul(int n, const double *A, const double *B, double *C) { C[0] = A[0] * B[0] * n; }\n"
    with pytest.raises(FormatError, match=r"no definition of dgemm\(\) found"):
        extract_source(code, DGEMM)


def test_prefix_of_another_name_does_not_count():
    code = "void my_dgemm(int n, const double *A, const double *B, double *C) { C[0] = A[0] * B[0] * n; }\n"
    with pytest.raises(FormatError, match="no definition of dgemm"):
        extract_source(code, DGEMM)


def test_refusal_without_code_raises():
    with pytest.raises(FormatError, match="no definition of dgemm"):
        extract_source("I am sorry, I cannot write that kernel.", DGEMM)


def test_wrong_block_then_right_block():
    bad = "float dgemm(int n, const double *A, const double *B, double *C) { return 0.0f; }\n"
    answer = fenced(bad) + "Oops, the correct one:\n" + fenced(KERNEL)
    assert extract_source(answer, DGEMM) == KERNEL


# ---- dgemv ----------------------------------------------------------------------------


def test_dgemv_signature():
    code = (
        "void dgemv(int n, const double *restrict A, const double *restrict x, double *restrict y) {\n"
        "    for (int i = 0; i < n; i++) { double s = 0; for (int j = 0; j < n; j++) s += A[i*n+j] * x[j]; y[i] = s; }\n}\n"
    )
    assert extract_source(fenced(code), DGEMV) == code


def test_dgemm_is_not_a_dgemv():
    with pytest.raises(FormatError, match="no definition of dgemv"):
        extract_source(KERNEL, DGEMV)


def test_dgemv_wrong_parameter_type():
    code = "void dgemv(int n, const double *A, const double *x, float *y) { y[0] = A[0] * x[0] * n; }\n"
    with pytest.raises(FormatError, match=r"float\*"):
        extract_source(code, DGEMV)
