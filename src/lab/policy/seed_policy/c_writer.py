"""Writing C source with a style: indentation, brace placement, comments, loop headers.

`Style` holds the surface choices that differ between people and do not change what the
code does; `CWriter` collects lines under a style; `for_loop` writes a loop header,
`tile_var` names a tile loop, `vector_type` gives the AVX type, width and intrinsic
prefix. The kernel generators (the per-problem modules of lab.policy.seed_policy.problems)
write every kernel through these.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Style:
    """Surface choices that do not change what the code does."""

    names: tuple[str, str, str] = ("i", "j", "k")  # row, column, reduction loop variables
    index: str = "int"  # int | long | size_t
    allman: bool = False  # opening braces on their own line
    comments: int = 1  # 0 none, 1 a header comment, 2 also inline comments
    row_pointers: bool = False  # cache row pointers (a = A + i*n) instead of indexing A[i*n+k]
    macro: bool = False  # #define IDX(r, c) for indexing
    restrict: bool = False  # restrict-qualified local pointers
    acc: str = "sum"  # name of scalar accumulators


class CWriter:
    """Collects lines with indentation and the style's brace placement."""

    def __init__(self, style: Style):
        self.style, self.lines, self.depth = style, [], 0

    def line(self, text: str = "") -> None:
        self.lines.append(("    " * self.depth + text) if text else "")

    def open(self, head: str) -> None:
        if self.style.allman:
            self.line(head)
            self.line("{")
        else:
            self.line(head + " {")
        self.depth += 1

    def block(self) -> None:
        """A bare compound statement (after a pragma): the brace always on its own line."""
        self.line("{")
        self.depth += 1

    def close(self, tail: str = "") -> None:
        self.depth -= 1
        self.line("}" + tail)

    def comment(self, text: str, level: int = 2) -> None:
        if self.style.comments >= level:
            self.line(f"/* {text} */")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def for_loop(var: str, start: str, end: str, style: Style, step: str = "1") -> str:
    t = style.index
    bound = f"(size_t){end}" if t == "size_t" and end.isidentifier() else end
    inc = f"{var}++" if step == "1" else f"{var} += {step}"
    return f"for ({t} {var} = {start}; {var} < {bound}; {inc})"


def tile_var(var: str) -> str:
    """Name of the tile loop over `var`: ii for i, row_t for row."""
    return var * 2 if len(var) == 1 else f"{var}_t"


def vector_type(simd: str | None) -> tuple[str, int, str]:
    """(vector type, doubles per vector, intrinsic prefix) of an intrinsics flavour: AVX-512
    for "avx512", AVX2 otherwise."""
    return ("__m512d", 8, "_mm512") if simd == "avx512" else ("__m256d", 4, "_mm256")
