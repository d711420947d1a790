"""JACOBI2D's kernel generator: one 5-point Jacobi sweep over an n x n grid, the border copied.

Families:

- naive: row by row, the columns with `omp simd` or unrolled;
- blocked: row x column tiles (cache blocking), unrolled columns inside;
- intrinsics: AVX2/AVX-512, five unaligned loads per vector of outputs and a scalar tail.

OpenMP parallelizes over rows (tile rows), with a schedule. `GENERATOR` is what the registry
(lab.policy.seed_policy.problems) holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, tile_var, vector_type
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.suite import draw_omp, loop_defects, omp_for, translation_unit, unrolled

SIGNATURE = "void jacobi2d(int n, const double{r}u, double{r}v)"
FAMILIES = ("naive", "blocked", "intrinsics")
# Families, weighted by repetition like a base model's habits: mostly the textbook loop.
OPTIONS = ["naive"] * 5 + ["blocked"] * 2 + ["intrinsics"] * 2
# The OpenMP schedules a family may carry (weighted by repetition).
SCHEDULES = {
    "naive": ["static", "static", "dynamic", "guided"],
    "blocked": ["static", "dynamic"],
    "intrinsics": ["static", "guided"],
}
WHAT = {
    "naive": "one 5-point sweep, row by row",
    "blocked": "5-point sweep in tiles",
    "intrinsics": "5-point sweep, a vector of outputs at a time",
}


def _jacobi_point(spec: KernelSpec, i: str, j: str, out: str = "v", src: str = "u") -> str:
    right = f"{src}[({i} + 1) * n + {j} - 1]" if spec.defect == "wrong_index" else f"{src}[({i} + 1) * n + {j}]"
    return (
        f"{out}[{i} * n + {j}] = 0.2 * ({src}[{i} * n + {j}] + {src}[({i} - 1) * n + {j}] + {right} + "
        f"{src}[{i} * n + {j} - 1] + {src}[{i} * n + {j} + 1]);"
    )


def _jacobi(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i, j, _ = s.names
    if spec.defect != "no_border":
        w.comment("the border of v is the border of u", 1)
        w.open(for_loop(j, "0", "n", s))
        w.line(f"v[{j}] = u[{j}];")
        w.line(f"v[(n - 1) * n + {j}] = u[(n - 1) * n + {j}];")
        w.close()
        w.open(for_loop(i, "1", "n - 1", s))
        w.line(f"v[{i} * n] = u[{i} * n];")
        w.line(f"v[{i} * n + n - 1] = u[{i} * n + n - 1];")
        w.close()
    rows_hi = "n - 2" if spec.defect == "off_by_one" else "n - 1"
    if spec.family == "blocked":
        bi, _, bj = spec.tile
        ii, jj = tile_var(i), tile_var(j)
        if spec.omp:
            w.line(omp_for(spec))
        w.open(for_loop(ii, "1", "n - 1", s, "BI"))
        w.open(for_loop(jj, "1", "n - 1", s, "BJ"))
        w.line(f"{s.index} {i}_end = {ii} + BI < n - 1 ? {ii} + BI : {rows_hi};")
        w.line(f"{s.index} {j}_end = {jj} + BJ < n - 1 ? {jj} + BJ : n - 1;")
        w.open(f"for ({s.index} {i} = {ii}; {i} < {i}_end; {i}++)")
        if spec.simd == "pragma":
            w.line("#pragma omp simd")
        unrolled(spec, w, j, jj, f"{j}_end", lambda c: _jacobi_point(spec, i, c))
        w.close()
        w.close()
        w.close()
        return
    if spec.family == "intrinsics":
        vt, width, p = vector_type(spec.simd)
        w.line(f"const {vt} fifth = {p}_set1_pd(0.2);")
        if spec.omp:
            w.line(omp_for(spec))
        w.open(for_loop(i, "1", rows_hi, s))
        w.line(f"const double *cur = u + (size_t){i} * n;")
        w.line("const double *up = cur - n, *down = cur + n, *left = cur - 1, *right = cur + 1;")
        w.line(f"double *out = v + (size_t){i} * n;")
        w.line(f"{s.index} {j} = 1;")
        w.open(f"for (; {j} + {width} < n; {j} += {width})")
        below = f"down - 1 + {j}" if spec.defect == "wrong_index" else f"down + {j}"
        w.line(f"{vt} vs = {p}_add_pd({p}_loadu_pd(cur + {j}), {p}_loadu_pd(up + {j}));")
        w.line(f"vs = {p}_add_pd(vs, {p}_loadu_pd({below}));")
        w.line(f"vs = {p}_add_pd(vs, {p}_loadu_pd(left + {j}));")
        w.line(f"vs = {p}_add_pd(vs, {p}_loadu_pd(right + {j}));")
        w.line(f"{p}_storeu_pd(out + {j}, {p}_mul_pd(fifth, vs));")
        w.close()
        if spec.defect != "no_tail":
            w.open(f"for (; {j} < n - 1; {j}++)")
            w.line(f"out[{j}] = 0.2 * (cur[{j}] + up[{j}] + down[{j}] + left[{j}] + right[{j}]);")
            w.close()
        w.close()
        return
    if spec.omp:
        w.line(omp_for(spec))
    w.open(for_loop(i, "1", rows_hi, s))
    if spec.simd == "pragma":
        w.line("#pragma omp simd")
    unrolled(spec, w, j, "1", "n - 1", lambda c: _jacobi_point(spec, i, c))
    w.close()


def render(spec: KernelSpec) -> str:
    """The C source of a JACOBI2D spec (a complete translation unit)."""
    defines = (f"#define BI {spec.tile[0]}", f"#define BJ {spec.tile[2]}") if spec.tile else ()
    return translation_unit(spec, SIGNATURE, _jacobi, WHAT, defines=defines)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random JACOBI2D spec; `optimize` turns on the optional techniques more often, `mode` is
    the prompt's execution model (generator.random_spec)."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.2
    kw = draw_omp(rng, SCHEDULES, family, omp_rate(optimize, mode))
    if family in ("naive", "blocked"):
        if rng.random() < p:
            kw["unroll"] = rng.choice([2, 4, 4, 8])
        elif family == "naive" and rng.random() < p:
            kw["simd"] = "pragma"
    if family == "intrinsics":
        kw["simd"] = rng.choice(["avx2", "avx512", "avx512"])
    if family == "blocked":
        kw["tile"] = (rng.choice([8, 16, 32, 64]), 0, rng.choice([128, 256, 512, 1024]))  # (rows, -, columns)
    return KernelSpec("jacobi2d", family, **kw)


def defects(spec: KernelSpec) -> list[str]:
    """A loop kernel's defects (suite.loop_defects), and a border left unwritten."""
    return [*loop_defects(spec), "no_border"]


def sweep() -> list[KernelSpec]:
    """Every family and technique of JACOBI2D (default style)."""
    out = []
    for omp in (None, "static"):
        o = {"omp": omp} if omp else {}
        out += [
            {"family": "naive", **o},
            {"family": "naive", "simd": "pragma", **o},
            {"family": "naive", "unroll": 4, **o},
        ]
        out += [
            {"family": "blocked", "tile": (16, 0, 512), **o},
            {"family": "blocked", "tile": (32, 0, 256), "unroll": 2, **o},
        ]
        out += [{"family": "intrinsics", "simd": v, **o} for v in ("avx2", "avx512")]
    return [KernelSpec("jacobi2d", **kw) for kw in out]


GENERATOR = ProblemGenerator("jacobi2d", FAMILIES, render, draw, defects, sweep, field_techniques)
