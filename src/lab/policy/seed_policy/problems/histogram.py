"""HISTOGRAM's kernel generator: the counts of each byte value in n bytes (256 int64 bins).

Families:

- naive: one table, unrolled; with OpenMP, atomic increments;
- blocked: chunk by chunk (a tile loop; cache blocking);
- privatized: several tables (unrolled: repeated bytes do not wait on each other's
  increments) merged at the end; with OpenMP, one private table per thread.

`GENERATOR` is what the registry (lab.policy.seed_policy.problems) holds.
"""

from __future__ import annotations

import random

from lab.policy.seed_policy.c_writer import CWriter, for_loop, tile_var
from lab.policy.seed_policy.problems.base import KernelSpec, ProblemGenerator, field_techniques, omp_rate
from lab.policy.seed_policy.problems.suite import draw_omp, translation_unit, unrolled

SIGNATURE = "void histogram(int n, const uint8_t{r}x, int64_t{r}counts)"
FAMILIES = ("naive", "blocked", "privatized")
# Families, weighted by repetition like a base model's habits: mostly the textbook loop.
OPTIONS = ["naive"] * 5 + ["blocked"] * 2 + ["privatized"] * 3
# The OpenMP schedules a family may carry (weighted by repetition; `atomic`: atomic increments).
SCHEDULES = {"naive": ["atomic"], "privatized": ["static", "static", "dynamic"]}
WHAT = {
    "naive": "count every byte",
    "blocked": "count chunk by chunk",
    "privatized": "private tables, merged at the end",
}


def _histogram(spec: KernelSpec, w: CWriter, helpers: list[str]) -> None:
    s = spec.style
    i = s.names[0]
    hi = "n - 1" if spec.defect == "off_by_one" else "n"
    byte = (lambda at: f"x[{at}] ^ 1") if spec.defect == "wrong_index" else (lambda at: f"x[{at}]")

    def zero_counts() -> None:
        if spec.defect == "no_zero":
            return
        if s.comments == 2 or s.macro:
            w.open("for (int b = 0; b < 256; b++)")
            w.line("counts[b] = 0;")
            w.close()
        else:
            w.line("memset(counts, 0, 256 * sizeof(int64_t));")

    if spec.family == "privatized" and spec.omp:
        zero_counts()
        u = spec.unroll
        w.line(f"{s.index} m = n - n % {u};")
        w.line("#pragma omp parallel")
        w.block()
        w.line("int64_t local[256] = {0};")
        w.line("#pragma omp for" + (" schedule(dynamic, 65536)" if spec.omp == "dynamic" else ""))
        w.open(for_loop(i, "0", "m", s, str(u)))
        for d in range(u):
            w.line(f"local[x[{i} + {d}]]++;" if d else f"local[x[{i}]]++;")
        w.close()
        w.line("#pragma omp critical")
        w.open("for (int b = 0; b < 256; b++)")
        w.line("counts[b] += local[b];")
        w.close()
        w.close()
        if spec.defect != "no_tail":
            w.open(for_loop(i, "m", hi, s))
            w.line(f"counts[x[{i}]]++;")
            w.close()
        return
    if spec.family == "privatized":
        u = spec.unroll
        w.comment(f"{u} tables, so that repeated bytes do not wait on each other's increments", 1)
        w.line(f"int64_t h[{u}][256];")
        w.line("memset(h, 0, sizeof h);")
        w.line(f"{s.index} {i} = 0;")
        w.open(f"for (; {i} + {u - 1} < n; {i} += {u})")
        for d in range(u):
            w.line(f"h[{d}][x[{i} + {d}]]++;" if d else f"h[0][x[{i}]]++;")
        w.close()
        if spec.defect != "no_tail":
            w.open(f"for (; {i} < {hi}; {i}++)")
            w.line(f"h[0][x[{i}]]++;")
            w.close()
        w.open("for (int b = 0; b < 256; b++)")
        w.line(f"counts[b] = {' + '.join(f'h[{d}][b]' for d in range(u))};")
        w.close()
        return
    zero_counts()
    if spec.family == "blocked":
        ii = tile_var(i)
        w.open(for_loop(ii, "0", "n", s, "BS"))
        w.line(f"{s.index} end = {ii} + BS < n ? {ii} + BS : {hi};")
        w.open(f"for ({s.index} {i} = {ii}; {i} < end; {i}++)")
        w.line(f"counts[{byte(i)}]++;")
        w.close()
        w.close()
        return
    if spec.omp:
        w.line("#pragma omp parallel for")
        w.open(for_loop(i, "0", hi, s))
        w.line("#pragma omp atomic")
        w.line(f"counts[{byte(i)}]++;")
        w.close()
        return
    unrolled(spec, w, i, "0", "n" if spec.unroll > 1 else hi, lambda at: f"counts[{byte(at)}]++;", tail_hi=hi)


def render(spec: KernelSpec) -> str:
    """The C source of a HISTOGRAM spec (a complete translation unit)."""
    defines = (f"#define BS {max(spec.tile)}",) if spec.tile else ()
    return translation_unit(spec, SIGNATURE, _histogram, WHAT, includes=("stdint.h",), defines=defines)


def draw(rng: random.Random, optimize: bool, mode: str | None) -> KernelSpec:
    """A random HISTOGRAM spec; `optimize` turns on the optional techniques more often, `mode` is
    the prompt's execution model (generator.random_spec)."""
    family = rng.choice(OPTIONS)
    p = 0.45 if optimize else 0.2
    kw = draw_omp(rng, SCHEDULES, family, omp_rate(optimize, mode))
    if family == "privatized":
        kw["unroll"] = rng.choice([2, 4, 4, 8])  # the number of tables
    if family == "naive" and rng.random() < p:
        kw["unroll"] = rng.choice([2, 4, 8])
    if family == "blocked":
        kw["tile"] = (0, rng.choice([4096, 65536]), 0)
    if family == "naive" and kw.get("omp"):
        kw.pop("unroll", None)  # the atomic version stays a plain loop
    return KernelSpec("histogram", family, **kw)


def defects(spec: KernelSpec) -> list[str]:
    """The defects `render` can apply to `spec` (each makes it fail its checks)."""
    out = ["syntax", "off_by_one"]
    if spec.unroll > 1 or spec.family == "privatized":
        out += ["no_tail", "no_tail"]
    if spec.family == "naive" and not spec.omp:
        out.append("wrong_index")
    if spec.family in ("naive", "blocked"):
        out.append("no_zero")
    return out


def sweep() -> list[KernelSpec]:
    """Every family and technique of HISTOGRAM (default style)."""
    out = [
        {"family": "naive"},
        {"family": "privatized", "unroll": 4},
        {"family": "naive", "unroll": 4},
        {"family": "blocked", "tile": (0, 65536, 0)},
        {"family": "naive", "omp": "atomic"},
        {"family": "privatized", "unroll": 4, "omp": "static"},
    ]
    return [KernelSpec("histogram", **kw) for kw in out]


GENERATOR = ProblemGenerator("histogram", FAMILIES, render, draw, defects, sweep, field_techniques)
