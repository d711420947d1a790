"""Rendering shared by the dense n x n matrix problems (DGEMM, DGEMV): row-major indexing, loop
bounds with the off_by_one slip, unrolled loops with their remainder, OpenMP pragmas, includes,
the header comment, and `translation_unit`, which assembles a kernel from its problem's body.

The habits written here (an `IDX` macro, `(size_t)` casts, `schedule(static)` spelled out or
not) follow the spec's `Style`, so the same spec in two styles differs the way two people do.
"""

from __future__ import annotations

from collections.abc import Callable

from lab.policy.seed_policy.c_writer import CWriter, Style, for_loop
from lab.policy.seed_policy.problems.base import KernelSpec

#: A problem's body writer: (spec, writer of the function body, helper functions placed before it).
Body = Callable[[KernelSpec, CWriter, list[str]], None]


def omp_pragma(spec: KernelSpec, collapse_ok: bool = True) -> str | None:
    if not spec.omp:
        return None
    if spec.omp == "collapse" and collapse_ok:
        return "#pragma omp parallel for collapse(2) schedule(static)"
    if spec.omp in ("dynamic", "guided"):
        return f"#pragma omp parallel for schedule({spec.omp})"
    return "#pragma omp parallel for" + (
        " schedule(static)" if spec.omp == "static" and spec.style.comments != 1 else ""
    )


def headers(spec: KernelSpec, extra: tuple[str, ...], code: str) -> list[str]:
    hs = list(extra)
    if spec.omp and spec.style.comments >= 2:
        hs.append("omp.h")
    if "size_t" in code and not {"stddef.h", "stdlib.h", "string.h"} & set(hs):
        hs.append("stddef.h")
    return [f"#include <{h}>" for h in dict.fromkeys(hs)]


def naive_description(spec: KernelSpec) -> str:
    """What the header comment calls the textbook loops, by loop order (three ways to say ijk)."""
    plain = ["straightforward triple loop", "textbook triple loop", "simple reference version"][
        (len(spec.style.names[0]) + spec.style.comments + (spec.style.index == "int")) % 3
    ]
    return {
        "ijk": plain,
        "ikj": "i-k-j loop order for unit-stride access to B and C",
        "kij": "k-i-j loop order",
    }.get(spec.order, "simple loops")


def header_comment(spec: KernelSpec, what: str) -> str | None:
    if spec.style.comments == 0:
        return None
    extras = []
    if spec.omp:
        extras.append("OpenMP")
    if spec.unroll > 1:
        extras.append(f"unrolled x{spec.unroll}")
    if spec.simd == "pragma":
        extras.append("omp simd")
    return f"/* {spec.problem.upper()}: {what}" + (f" ({', '.join(extras)})" if extras else "") + ". */"


def ix(style: Style, row: str, col: str) -> str:
    if " " in row and not row.startswith("("):
        row = f"({row})"
    if style.macro:
        return f"IDX({row}, {col})"
    cast = "(size_t)" if style.index == "int" and style.comments == 2 else ""
    return f"{cast}{row} * n + {col}"


def bound(spec: KernelSpec, end: str, which: str) -> str:
    """Loop bound with the off_by_one defect applied to one loop."""
    if spec.defect == "off_by_one" and which == "row":
        return f"{end} - 1"
    return end


def unrollable_loop(spec: KernelSpec, w: CWriter, var: str, lo: str, hi: str, stmt, tail_stmt=None) -> bool:
    """for var in [lo, hi): stmt(var) — unrolled by spec.unroll with a remainder loop (unless
    the no_tail defect drops it). `tail_stmt` overrides the statement of the plain loop.
    Returns whether it unrolled (the caller then adds `remainder`)."""
    s = spec.style
    tail_stmt = tail_stmt or stmt
    if spec.unroll > 1:
        u = spec.unroll
        w.line(f"{s.index} {var} = {lo};")
        w.open(f"for (; {var} + {u - 1} < {hi}; {var} += {u})")
        for d in range(u):
            w.line(stmt(f"{var} + {d}" if d else var))
        w.close()
        return True
    w.open(for_loop(var, lo, hi, s))
    w.line(tail_stmt(var))
    w.close()
    return False


def remainder(spec: KernelSpec, w: CWriter, var: str, hi: str, stmt) -> None:
    if spec.defect != "no_tail":
        w.open(f"for (; {var} < {hi}; {var}++)")
        w.line(stmt(var))
        w.close()


def translation_unit(
    spec: KernelSpec,
    signature: str,
    body: Body,
    what: str,
    extra: tuple[str, ...] = (),
    defines: tuple[str, ...] = (),
) -> str:
    """The kernel's C source: includes (`extra`, then what the code needs), `defines`, the
    helpers `body` wrote, the header comment saying `what` it is, and the function.
    `signature` has `{r}` where each pointer's ` *` (or ` *restrict `) goes."""
    s = spec.style
    w = CWriter(s)
    helpers: list[str] = []
    defines_ = list(defines)
    if s.macro:
        defines_.append("#define IDX(r, c) ((r) * n + (c))")
    head = header_comment(spec, what)
    w.open(signature.format(r=" *restrict " if s.restrict else " *"))
    body(spec, w, helpers)
    w.close()
    out = headers(spec, extra, w.text() + "".join(helpers))
    if out:
        out.append("")
    if defines_:
        out += defines_ + [""]
    return "\n".join(out) + "\n" + "".join(h + "\n" for h in helpers) + ((head + "\n") if head else "") + w.text()
