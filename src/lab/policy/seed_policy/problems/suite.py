"""Rendering and sampling shared by the suite problems beyond DGEMM and DGEMV (dot, jacobi2d,
spmv, prefix_sum, histogram, transpose): OpenMP pragmas, unrolled loops with their remainder,
horizontal sums, the OpenMP draw of a family, and `translation_unit`, which assembles a kernel
from its problem's body (includes from what the code uses, tile defines, the header comment).

Each problem's module (lab.policy.seed_policy.problems.<name>) writes its families' bodies
with these and states its own draws, defects, sweep and techniques.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from lab.policy.seed_policy.c_writer import CWriter, for_loop
from lab.policy.seed_policy.problems.base import KernelSpec

#: A problem's body writer: (spec, writer of the function body, helper functions placed before it).
Body = Callable[[KernelSpec, CWriter, list[str]], None]


def loop_defects(spec: KernelSpec) -> list[str]:
    """The defects of a loop kernel that `render` can apply (each makes it fail its checks): a
    syntax slip, an off-by-one bound, a dropped remainder loop (twice as likely) where the loop
    is unrolled or vectorised, a wrong index in the plain family. Problems add their own."""
    out = ["syntax", "off_by_one"]
    if spec.unroll > 1 or spec.family == "intrinsics":
        out += ["no_tail", "no_tail"]
    if spec.family == "naive":
        out.append("wrong_index")
    return out


def draw_omp(rng: random.Random, schedules: dict[str, list[str]], family: str, omp_rate: float) -> dict[str, str]:
    """`{"omp": schedule}` for `omp_rate` of the draws of a family that has OpenMP schedules
    (`schedules[family]`, weighted by repetition), else `{}` (no random number drawn)."""
    options = schedules.get(family)
    if options and rng.random() < omp_rate:
        return {"omp": rng.choice(options)}
    return {}


def hsum(spec: KernelSpec, w: CWriter, acc: str, vec: str) -> None:
    """`acc += the horizontal sum of vec`."""
    if spec.simd == "avx512":
        w.line(f"{acc} += _mm512_reduce_add_pd({vec});")
        return
    w.line("double lanes[4];")
    w.line(f"_mm256_storeu_pd(lanes, {vec});")
    w.line(f"{acc} += lanes[0] + lanes[1] + lanes[2] + lanes[3];")


def omp_for(spec: KernelSpec, reduction: str | None = None) -> str:
    schedule = {"dynamic": " schedule(dynamic, 64)", "guided": " schedule(guided)"}.get(spec.omp, "")
    if spec.omp == "static" and spec.style.comments == 2:
        schedule = " schedule(static)"
    red = f" reduction(+:{reduction})" if reduction else ""
    collapse = " collapse(2)" if spec.omp == "collapse" else ""
    return f"#pragma omp parallel for{collapse}{schedule}{red}"


def unrolled(spec: KernelSpec, w: CWriter, var: str, lo: str, hi: str, stmt, tail_hi: str | None = None) -> None:
    """for var in [lo, hi): stmt(var) -- unrolled by spec.unroll with a remainder loop (which
    the no_tail defect drops; `tail_hi` bounds the remainder, for the off_by_one defect)."""
    s = spec.style
    u = spec.unroll
    if u == 1:
        w.open(for_loop(var, lo, hi, s))
        w.line(stmt(var))
        w.close()
        return
    w.line(f"{s.index} {var} = {lo};")
    w.open(f"for (; {var} + {u - 1} < {hi}; {var} += {u})")
    for d in range(u):
        w.line(stmt(f"{var} + {d}" if d else var))
    w.close()
    if spec.defect != "no_tail":
        w.open(f"for (; {var} < {tail_hi or hi}; {var}++)")
        w.line(stmt(var))
        w.close()


def translation_unit(
    spec: KernelSpec,
    signature: str,
    body: Body,
    what: dict[str, str],
    includes: tuple[str, ...] = (),
    defines: tuple[str, ...] = (),
) -> str:
    """The kernel's C source: `includes`, then the headers the code needs (string.h for memset,
    immintrin.h for intrinsics, omp.h for the runtime's functions), the `defines` (tile sizes),
    the helpers `body` wrote, a header comment saying `what[family]` it is, and the function.
    `signature` has `{r}` where each pointer's ` *` (or ` *restrict `) goes."""
    s = spec.style
    w = CWriter(s)
    helpers: list[str] = []
    w.open(signature.format(r=" *restrict " if s.restrict else " *"))
    body(spec, w, helpers)
    w.close()
    text = w.text()
    headers = list(includes)
    if "memset" in text:
        headers.append("string.h")
    if "_mm" in text or "__m" in text or helpers:
        headers.append("immintrin.h")
    if "omp_get" in text or (spec.omp and s.comments >= 2):
        headers.append("omp.h")
    if "size_t" in text and "string.h" not in headers:
        headers.append("stddef.h")
    head = None
    if s.comments:
        extras = [f"unrolled x{spec.unroll}"] if spec.unroll > 1 else []
        extras += ["OpenMP"] if spec.omp else []
        extras += ["omp simd"] if spec.simd == "pragma" else []
        head = f"/* {spec.problem}: {what[spec.family]}" + (f" ({', '.join(extras)})" if extras else "") + ". */"
    out = [f"#include <{h}>" for h in headers]
    if out:
        out.append("")
    if defines:
        out += [*defines, ""]
    return "\n".join(out) + "\n" + "".join(h + "\n" for h in helpers) + ((head + "\n") if head else "") + text
