"""PREFIX_SUM's kernel generator: the inclusive scan of n int64 values.

Families:

- naive: a running sum (or each output from the previous one), unrolled;
- blocked: the running sum over chunks (a tile loop; cache blocking);
- intrinsics: an AVX-512 in-register scan of 8 lanes with the total carried between vectors;
- two_pass: the OpenMP one: each thread sums its share, a barrier, then scans it from the sum
  of the shares before it.

`GENERATOR` is what the registry (lab.policy.seed_policy.problems) holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, tile_var
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques
from lab.policy.seed_policy.problems.suite import translation_unit, unrolled

SIGNATURE = "void prefix_sum(int n, const int64_t{r}x, int64_t{r}y)"
FAMILIES = ("naive", "blocked", "intrinsics", "two_pass")
# Families, weighted by repetition like a base model's habits: mostly the textbook loop.
OPTIONS = ["naive"] * 5 + ["blocked", "intrinsics", "intrinsics", "two_pass", "two_pass"]
WHAT = {
    "naive": "running sum",
    "blocked": "running sum over chunks",
    "intrinsics": "in-register vector scan with a carried total",
    "two_pass": "two-pass parallel scan",
}


_SCAN8 = """static inline __m512i scan8(__m512i v)
{
    /* inclusive scan of 8 lanes: add the vector shifted up by 1, 2 and 4 lanes */
    const __m512i z = _mm512_setzero_si512();
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 7));
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 6));
    v = _mm512_add_epi64(v, _mm512_alignr_epi64(v, z, 4));
    return v;
}
"""


_SCAN4 = """static inline __m256i scan4(__m256i v)
{
    /* inclusive scan of 4 lanes: add the vector shifted up by 1 and 2 lanes (zeros shifted in) */
    const __m256i z = _mm256_setzero_si256();
    v = _mm256_add_epi64(v, _mm256_blend_epi32(_mm256_permute4x64_epi64(v, _MM_SHUFFLE(2, 1, 0, 0)), z, 0x03));
    v = _mm256_add_epi64(v, _mm256_blend_epi32(_mm256_permute4x64_epi64(v, _MM_SHUFFLE(1, 0, 0, 0)), z, 0x0F));
    return v;
}
"""


def _prefix_sum(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, acc = s.names[0], s.acc
    hi = "n - 1" if spec.defect == "off_by_one" else "n"

    def step(at: str) -> str:
        if spec.defect == "wrong_index":
            return f"y[{at}] = {acc}; {acc} += x[{at}];"
        return f"{acc} += x[{at}]; y[{at}] = {acc};"

    if spec.family == "two_pass":
        w.comment("pass 1: each thread sums its share; pass 2: it scans the share from the sum before it", 1)
        w.line("int64_t part[256];")
        w.line("int nth = omp_get_max_threads() < 256 ? omp_get_max_threads() : 256;")
        w.line("#pragma omp parallel num_threads(nth)")
        w.block()
        w.line("int tid = omp_get_thread_num(), T = omp_get_num_threads();")
        w.line("long lo = (long)n * tid / T, hi = (long)n * (tid + 1) / T;")
        w.line(f"int64_t {acc} = 0;")
        w.open(f"for (long {i} = lo; {i} < hi; {i}++)")
        w.line(f"{acc} += x[{i}];")
        w.close()
        w.line(f"part[tid] = {acc};")
        w.line("#pragma omp barrier")
        w.line(f"{acc} = 0;")
        w.open(f"for (int q = 0; q {'<=' if spec.defect == 'wrong_index' else '<'} tid; q++)")
        w.line(f"{acc} += part[q];")
        w.close()
        w.open(f"for (long {i} = lo; {i} < hi; {i}++)")
        w.line(f"{acc} += x[{i}];")
        w.line(f"y[{i}] = {acc};")
        w.close()
        w.close()
        return
    if spec.family == "intrinsics":
        if spec.simd == "avx2":  # 4 lanes: the carry is lane 3, broadcast by a permute
            helpers.append(_SCAN4)
            lanes, head = 4, ["__m256i carry = _mm256_setzero_si256();"]
            body = [
                f"__m256i vs = _mm256_add_epi64(scan4(_mm256_loadu_si256((const __m256i *)(x + {i}))), carry);",
                f"_mm256_storeu_si256((__m256i *)(y + {i}), vs);",
                "carry = _mm256_permute4x64_epi64(vs, 0xFF);",
            ]
        else:
            helpers.append(_SCAN8)
            lanes = 8
            head = ["const __m512i last = _mm512_set1_epi64(7);", "__m512i carry = _mm512_setzero_si512();"]
            body = [
                f"__m512i vs = _mm512_add_epi64(scan8(_mm512_loadu_si512(x + {i})), carry);",
                f"_mm512_storeu_si512(y + {i}, vs);",
                "carry = _mm512_permutexvar_epi64(last, vs);",
            ]
        for line in head:
            w.line(line)
        w.line(f"{s.index} {i} = 0;")
        w.open(f"for (; {i} + {lanes - 1} < n; {i} += {lanes})")
        for line in body:
            w.line(line)
        w.close()
        w.line(f"int64_t {acc} = {i} ? y[{i} - 1] : 0;")
        if spec.defect != "no_tail":
            w.open(f"for (; {i} < {hi}; {i}++)")
            w.line(step(i))
            w.close()
        return
    w.line(f"int64_t {acc} = 0;")
    if spec.family == "blocked":
        ii = tile_var(i)
        w.open(for_loop(ii, "0", "n", s, "BS"))
        w.line(f"{s.index} end = {ii} + BS < n ? {ii} + BS : {hi};")
        w.open(f"for ({s.index} {i} = {ii}; {i} < end; {i}++)")
        w.line(step(i))
        w.close()
        w.close()
        return
    if spec.unroll == 1 and spec.style.acc == "t" and spec.defect is None:
        # Another habit: each output from the previous one.
        w.line("if (n <= 0)")
        w.line("    return;")
        w.line("y[0] = x[0];")
        w.open(for_loop(i, "1", "n", s))
        w.line(f"y[{i}] = y[{i} - 1] + x[{i}];")
        w.close()
        return
    unrolled(spec, w, i, "0", "n" if spec.unroll > 1 else hi, step, tail_hi=hi)


def render(spec: KernelSpec) -> str:
    """The C source of a PREFIX_SUM spec (a complete translation unit)."""
    defines = (f"#define BS {max(spec.tile)}",) if spec.tile else ()
    return translation_unit(spec, SIGNATURE, _prefix_sum, WHAT, includes=("stdint.h",), defines=defines)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random PREFIX_SUM spec; `optimize` turns on the optional techniques more often. Its one
    OpenMP family is two_pass, which the serial execution model does not permit (random_spec
    draws again)."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.2
    kw: dict = {"omp": "static"} if family == "two_pass" else {}
    if family == "naive" and rng.random() < p:
        kw["unroll"] = rng.choice([2, 4, 8])
    if family == "intrinsics":
        kw["simd"] = "avx512"  # the in-register scan is written with AVX-512's lane shifts
    if family == "blocked":
        kw["tile"] = (0, rng.choice([1024, 4096, 16384]), 0)
    return KernelSpec("prefix_sum", family, **kw)


def defects(spec: KernelSpec) -> list[str]:
    """The defects `render` can apply to `spec` (each makes it fail its checks)."""
    out = ["syntax"]
    if spec.family != "two_pass":
        out.append("off_by_one")
    if spec.unroll > 1 or spec.family == "intrinsics":
        out += ["no_tail", "no_tail"]
    if spec.family in ("naive", "two_pass"):
        out.append("wrong_index")
    return out


def sweep() -> list[KernelSpec]:
    """Every family and technique of PREFIX_SUM (default style)."""
    out = [{"family": "naive"}, {"family": "naive", "unroll": 4}, {"family": "blocked", "tile": (0, 4096, 0)}]
    out += [{"family": "intrinsics", "simd": "avx512"}, {"family": "intrinsics", "simd": "avx2"}]
    out.append({"family": "two_pass", "omp": "static"})
    return [KernelSpec("prefix_sum", **kw) for kw in out]


GENERATOR = ProblemGenerator("prefix_sum", FAMILIES, render, draw, defects, sweep, field_techniques)
