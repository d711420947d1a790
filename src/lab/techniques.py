"""The optimization techniques, each declared once: name, prompt wording, label, detector.

    >>> sorted(detect("void f(int n, double *x) {\\n#pragma omp parallel for\\n"
    ...               "for (int i = 0; i < n; i++) x[i] = 0; }"))
    ['openmp']
    >>> REGISTRY["simd"].wording
    'SIMD vectorization'

`REGISTRY` maps each name to a `Technique`; `TECHNIQUES` is their order (the order of
prompts, archive measures and tables). Everything else reads these: the prompt
sentence (lab.policy.prompts), the SQD archive and stages (lab.rl.sqd), the figures, and
the kernel generator, whose per-problem modules name the techniques a spec uses by
construction (lab.policy.seed_policy.problems: this layer knows nothing of generator specs).
To add a technique, add one entry here, and name it in the generator modules that build it.
Each problem declares which techniques apply to it (`techniques` in its problem.toml;
`problem_techniques`).

The detector reads the source text (comments and strings blanked) with heuristics
that match how each technique shows up in C; each entry's `summary` says what it
looks for. It is a heuristic: `tests/test_techniques.py` pins its behaviour on
varied styles.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from lab.harness.problems import load_problem
from lab.harness.static_check import splice_lines, strip_comments

_FOR = re.compile(r"\bfor\s*\(([^;]*);([^;]*);([^)]*)\)")
_STEP = re.compile(r"(\w+)\s*(?:\+=\s*([\w]+)|=\s*\1\s*\+\s*([\w]+))")
_TILE_NAME = re.compile(
    r"^(?:[A-Z_]*(?:B|BS|BLK|BLOCK|TILE|T|KC|MC|NC|NB|MB|KB)[A-Z0-9_]*|[a-z_]*(?:blk|block|tile|bs|kc|mc|nc)\w*)$"
)
_MIN_BOUND = re.compile(r"\b(?:MIN|min|imin|min_i|MINI|mini|fmin)\s*\(|\?")
#: The line _code() adds for the options of each GCC `optimize` attribute or pragma.
_OPTIMIZE = r"#\s*pragma\s+GCC\s+optimize-options\b"


def _option(name: str) -> str:
    """An `optimize` option that turns `name` on (`unroll-loops`, `-funroll-loops`), on the line
    _code() adds for it; `no-unroll-loops` turns it off and does not match."""
    return _OPTIMIZE + r"(?:[^\n]*[\s,])?(?:-f)?" + name


#: What strip_comments blanks but the compiler acts on: the string of a `_Pragma(...)` operator
#: and the options of `optimize(...)` (the quotes stay in the blanked code, at the same offsets).
_PRAGMA_OPERATOR = re.compile(r"\b_Pragma\s*\(\s*(?:L|u8|u|U)?\"")
#: `optimize("O3", "unroll-loops")`, `__optimize__(...)` and `#pragma GCC optimize "unroll-loops"`
#: (GCC takes the pragma's options with or without parentheses).
_OPTIMIZE_STRING = re.compile(r"(?:\b|_)optimize_*\s*\(?\s*(?:L|u8|u|U)?\"")
#: A macro that makes a pragma of its argument (`#define P(x) _Pragma(#x)`): its uses are pragmas.
_STRINGIZING_PRAGMA = re.compile(r"#\s*define\s+(\w+)\s*\(\s*(\w+)\s*\)\s*_Pragma\s*\(\s*#\s*\2\s*\)")
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_SIMD = re.compile(
    r"\b_mm(?:256|512)?_\w+\s*\(|\b__m(?:128|256|512)[di]?(?:_u)?\b|#\s*pragma\s+omp\s+(?:parallel\s+for\s+)?simd\b"
    r"|#\s*pragma\s+omp\s+for\s+simd\b|\b(?:__)?vector_size(?:__)?\s*\(|#\s*pragma\s+GCC\s+ivdep"
    # GCC's own vector types and builtins, and intrinsic names or types built by token pasting
    r"|\b__v\d+d[fi]\b|\b__builtin_ia32_\w+|\b_mm(?:256|512)?_?\s*##|\b__m\s*##"
    r"|" + _option(r"(?:tree-(?:slp-|loop-)?)?vectorize\b")
)
_OPENMP = re.compile(
    r"#\s*pragma\s+omp\s+(?:parallel|for|task|taskloop|sections)\b|" + _option(r"tree-parallelize-loops\b")
)
_UNROLL_PRAGMA = re.compile(r"#\s*pragma\s+(?:GCC\s+)?unroll\b|" + _option(r"(?:unroll-(?:all-)?loops|peel-loops)\b"))
_ALLOC = re.compile(r"\b(?:malloc|calloc|aligned_alloc|posix_memalign|_mm_malloc)\s*\(")
_STATIC_BUF = re.compile(r"\bstatic\s+(?:_Alignas\s*\(\s*\d+\s*\)\s*)?(?:double|float)\s+\w+\s*\[")
_SCALAR_ACC = re.compile(
    r"\b(?:double|register\s+double)\s+((?:[a-zA-Z]+\d+\s*(?:=\s*[^,;]+)?\s*,\s*)+[a-zA-Z]+\d+\s*(?:=\s*[^,;]+)?)\s*;"
)


def _code(source: str) -> str:
    """The source with comments and string contents blanked, as the detectors read it, plus one
    line at the end for each directive a string or a macro carries: `#pragma X` for each
    `_Pragma("X")` (macro bodies included) and each use `P(X)` of a macro defined as
    `_Pragma(#x)`, and `#pragma GCC optimize-options O1 O2` for the options of each `optimize`
    attribute or pragma. The digraph `%:` is read as `#`."""
    spliced = splice_lines(source)
    code = strip_comments(spliced).replace("%:", "# ")  # same length: offsets hold
    extra = []
    pragmas = []  # the directives _Pragma operators carry, with their strings
    for m in _PRAGMA_OPERATOR.finditer(code):
        end = code.find('"', m.end())
        if end > 0:
            text = spliced[m.end() : end].replace('\\"', '"').replace("\\\\", "\\")
            pragmas.append("#pragma " + text.replace("\n", " "))
    extra += pragmas
    # The options of every optimize attribute or pragma, in the source (strings blanked in
    # `code`, read from `spliced`) and in the pragmas a _Pragma carries (strings intact).
    for blanked, text in ((code, spliced), *((line, line) for line in pragmas)):
        for m in _OPTIMIZE_STRING.finditer(blanked):
            # Every string up to the end of the argument list: its `)` if it opened one (over
            # several lines), else the end of the line (the pragma without parentheses).
            stop = blanked.find(")" if "(" in m.group() else "\n", m.end())
            stop = len(blanked) if stop < 0 else stop
            options = [t.group(1) for t in _STRING.finditer(text, m.end() - 1, stop + 1)]
            extra.append("#pragma GCC optimize-options " + " ".join(options).replace("\n", " "))
    for m in _STRINGIZING_PRAGMA.finditer(code):
        for use in re.finditer(rf"\b{m.group(1)}\s*\(([^()\n]*)\)", code[m.end() :]):
            extra.append("#pragma " + use.group(1))
    return code + "\n" + "\n".join(extra)


def _loops(code: str) -> list[tuple[int, str, str | None, str]]:
    """(position, loop variable, step, condition) of each for loop."""
    out = []
    for m in _FOR.finditer(code):
        init, cond, inc = m.group(1), m.group(2), m.group(3)
        var = re.findall(r"(\w+)\s*=", init)
        var = var[-1] if var else (re.findall(r"\w+", inc) or [""])[0]
        step = None
        s = _STEP.search(inc)
        if s and s.group(1) == var:
            step = s.group(2) or s.group(3)
        out.append((m.start(), var, step, cond))
    return out


def _is_tile_step(step: str | None) -> bool:
    if step is None:
        return False
    if step.isdigit():
        return int(step) >= 16
    return bool(_TILE_NAME.match(step))


_NESTED_FOR = re.compile(r"for\s*\(")


def _body_end(code: str, pos: int) -> int:
    """Where the statement or block after the for-header at `pos` ends: the index just past it,
    or len(code) when the text is cut off (a policy's completion may stop anywhere, so this
    never raises; nested unbraced headers are followed in a loop, not by recursion)."""
    while True:
        j = code.find("(", pos)
        close = None if j < 0 else _matching(code, j, "(", ")")
        if close is None:
            return len(code)
        k = close + 1
        while k < len(code) and code[k].isspace():
            k += 1
        if not _NESTED_FOR.match(code, k):
            break
        pos = k
    if code.startswith("{", k):
        block = _matching(code, k, "{", "}")
        return len(code) if block is None else block + 1
    semicolon = code.find(";", k)
    return len(code) if semicolon < 0 else semicolon + 1


def _matching(code: str, at: int, opening: str, closing: str) -> int | None:
    """The index of the bracket that closes the one at `at`; None when it is never closed."""
    depth = 0
    for k in range(at, len(code)):
        depth += code[k] == opening
        depth -= code[k] == closing
        if depth == 0:
            return k
    return None


def _body(code: str, pos: int) -> str:
    """The statement or block that follows the for-header starting at `pos` (nested
    unbraced for-headers included)."""
    j = code.find("(", pos)
    close = None if j < 0 else _matching(code, j, "(", ")")
    if close is None:
        return ""
    return code[close + 1 : _body_end(code, pos)]


def _innermost_loops(code: str) -> list[tuple[str, str]]:
    """(variable, body) of loops that contain no other loop."""
    out = []
    for pos, var, _, _ in _loops(code):
        body = _body(code, pos)
        if not _FOR.search(body) and not re.search(r"\bwhile\s*\(", body):
            out.append((var, body))
    return out


def _manual_unroll(code: str, loops) -> bool:
    for pos, var, step, _ in loops:
        if not var or step is None or not step.isdigit() or int(step) < 2:
            continue
        body = _body(code, pos)
        offsets = {int(o) for o in re.findall(rf"\b{re.escape(var)}\s*\+\s*(\d+)\s*\]", body)}
        offsets |= {int(o) for o in re.findall(rf"\b{re.escape(var)}\s*\+\s*(\d+)\s*\)", body)}
        width = int(step)
        # Scalar unrolling: [k+1], [k+2]...; vector unrolling: offsets that are multiples of the vector width.
        if len(offsets) >= 1 and (1 in offsets or any(o % 4 == 0 and o < width for o in offsets)):
            if len(offsets) >= 1 and width >= 2 * min(offsets):
                return True
    return False


def _packing(code: str) -> bool:
    if not (_ALLOC.search(code) or _STATIC_BUF.search(code)):
        return False
    # A buffer element assigned from an input matrix element.
    return bool(
        re.search(r"\w+\s*\[[^\]]+\]\s*=\s*[AB]\w*\s*\[", code)
        or re.search(r"\*\s*\w+\s*\+\+\s*=\s*[AB]\w*\s*\[", code)
        or re.search(r"_mm(?:256|512)_store\w*_pd\s*\(\s*\w+\s*\+", code)
        and re.search(r"\bpack|\bBp\b|\bAp\b|\bBt\b|\bbt\b", code)
    )


def _top_level_commas(text: str) -> int:
    depth = count = 0
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        count += ch == "," and depth == 0
    return count


def _register_blocking(code: str) -> bool:
    for m in re.finditer(r"\b__m(?:256|512)d\s+([^;(]*(?:\([^;]*)?);", code):
        if _top_level_commas(m.group(1)) >= 3:  # four or more vector variables in one declaration
            return True
    vec_arrays = re.search(r"\b__m(?:256|512)d\s+\w+\s*\[\s*(\d+)\s*\](?:\s*\[\s*(\d+)\s*\])?", code)
    if vec_arrays and int(vec_arrays.group(1)) * int(vec_arrays.group(2) or 1) >= 4:
        return True
    if len(set(re.findall(r"\b__m(?:256|512)d\s+(\w+)\s*=", code))) >= 4 and re.search(r"\bc\w*\d", code):
        accs = set(re.findall(r"\b__m(?:256|512)d\s+(c\w*\d\w*)\s*=", code))
        if len(accs) >= 4:
            return True
    for m in _SCALAR_ACC.finditer(code):
        names = re.findall(r"([a-zA-Z]+\d+)\s*(?:=|,|$)", m.group(1))
        if len(names) >= 4:
            return True
    return False


def _reordered(code: str) -> bool:
    for var, body in _innermost_loops(code):
        if not var:
            continue
        # An update of the output row inside the innermost loop, indexed by its variable.
        if re.search(rf"\b[Cc]\w*\s*\[[^\]]*\b{re.escape(var)}\b[^\]]*\]\s*(?:\+=|=)", body):
            return True
        if re.search(
            rf"_mm(?:256|512)_storeu?_pd\s*\(\s*&?\s*[Cc]\w*\s*(?:\[[^\]]*\b{re.escape(var)}\b|\+[^,]*\b{re.escape(var)}\b)",
            body,
        ):
            return True
    return False


def _cache_blocking(code: str, loops) -> bool:
    tile_vars = {var for _, var, step, _ in loops if _is_tile_step(step)}
    if not tile_vars:
        return False
    # Tiles: a loop steps by a tile, and an inner loop starts at its variable or is clipped by a min().
    starts_at_tile = any(
        re.search(rf"=\s*({'|'.join(map(re.escape, tile_vars))})\s*;", code[pos : pos + 120]) for pos, *_ in loops
    )
    return bool(starts_at_tile or _MIN_BOUND.search(code))


@dataclass(frozen=True)
class Technique:
    """One optimization technique, as every part of the lab knows it."""

    name: str  # the identifier in configs, results and archive descriptors
    wording: str  # how a prompt names it
    short: str  # its label in figures
    summary: str  # what the detector looks for
    detector: Callable[[str, list], bool]  # (comment-free code, its for-loops) -> used?
    scope: Literal["loop", "kernel"]  # loop-level rewrite, or a change of the kernel's structure (figures group by it)


_DEFINITIONS = (
    Technique(
        "loop_reorder",
        "loop reordering",
        "reorder",
        "the innermost loop of the update walks along a row of the output (`C[... + j] +=` indexed by the "
        "innermost loop variable), not the textbook dot product into a scalar",
        lambda code, loops: _reordered(code),
        "loop",
    ),
    Technique(
        "cache_blocking",
        "cache blocking",
        "block",
        "loops that step by a tile (a constant >= 16 or a tile-named constant) with an inner loop starting "
        "at the tile or bounded by a min() of the tile end and n",
        _cache_blocking,
        "loop",
    ),
    Technique(
        "unrolling",
        "loop unrolling",
        "unroll",
        "an unroll pragma, or a loop stepping by a constant whose body uses several consecutive offsets of "
        "its variable (`[k]`, `[k + 1]`, ...)",
        lambda code, loops: bool(_UNROLL_PRAGMA.search(code)) or _manual_unroll(code, loops),
        "loop",
    ),
    Technique(
        "simd",
        "SIMD vectorization",
        "simd",
        "vector intrinsics or types (`_mm256_*`, `__m512d`), `#pragma omp simd`, or GCC vector extensions",
        lambda code, loops: bool(_SIMD.search(code)),
        "loop",
    ),
    Technique(
        "openmp",
        "OpenMP multithreading",
        "omp",
        "an OpenMP parallel construct",
        lambda code, loops: bool(_OPENMP.search(code)),
        "kernel",
    ),
    Technique(
        "packing",
        "data packing",
        "pack",
        "a copy of an input into a separate buffer (heap or static) laid out for the kernel",
        lambda code, loops: _packing(code),
        "kernel",
    ),
    Technique(
        "register_blocking",
        "register blocking",
        "regblock",
        "several named accumulators covering a block of the output held in registers across the innermost "
        "loop (>= 4 scalar or vector accumulators)",
        lambda code, loops: _register_blocking(code),
        "kernel",
    ),
)

REGISTRY: dict[str, Technique] = {t.name: t for t in _DEFINITIONS}
TECHNIQUES: tuple[str, ...] = tuple(REGISTRY)

#: Kinds of kernel, slowest first, that the training dynamics follow step by step: a set of
#: techniques is one of many archive cells, a family answers "what kind of kernel is the policy
#: writing". `fast` is vector code over a packed or register-blocked structure (DGEMM's
#: micro-kernel family); `blocked` that structure without vectors; `simd` vectors without it;
#: `loop` only loop-level rewrites (reordering, tiling, unrolling); `none` the textbook loop.
#: OpenMP is left out: whether a kernel starts threads is its execution model, not its kind.
FAMILIES: tuple[str, ...] = ("none", "loop", "blocked", "simd", "fast")
_STRUCTURE = frozenset({"packing", "register_blocking"})


def family(used: set[str] | frozenset[str] | list[str] | tuple[str, ...]) -> str:
    """The family (one of FAMILIES) of a kernel that uses the techniques `used`.

    >>> family({"simd", "packing", "openmp"}), family(["loop_reorder"]), family([])
    ('fast', 'loop', 'none')
    """
    used = set(used) - {"openmp"}
    if "simd" in used:
        return "fast" if used & _STRUCTURE else "simd"
    if used & _STRUCTURE:
        return "blocked"
    return "loop" if used else "none"


def problem_techniques(problem: str | None) -> tuple[str, ...]:
    """The techniques that apply to `problem`, in registry order (its problem.toml declares them;
    None: every technique). A name the registry does not know is refused, with the known ones."""
    if problem is None:
        return TECHNIQUES
    declared = load_problem(problem).techniques
    unknown = sorted(set(declared) - set(TECHNIQUES))
    if unknown:
        raise ValueError(
            f"{problem}: problem.toml names unknown technique(s) {unknown}; known: {', '.join(TECHNIQUES)}"
        )
    return tuple(t for t in TECHNIQUES if t in declared) if declared else TECHNIQUES


def detect(source: str, problem: str | None = None) -> set[str]:
    """The set of techniques (names from TECHNIQUES) the source uses; with `problem`, only the
    techniques that apply to it (the detectors' patterns are written for the shapes each technique
    takes where it applies: a histogram's `counts[b] = 0` loop is not DGEMM's loop reordering)."""
    code = _code(source)
    loops = _loops(code)
    applicable = problem_techniques(problem)
    return {t.name for t in _DEFINITIONS if t.name in applicable and t.detector(code, loops)}


def confirm(detected: set[str] | frozenset[str], facts: dict | None, problem: str | None = None) -> set[str]:
    """The detected techniques, corrected by what the compiled object shows
    (lab.harness.static_check.object_facts): OpenMP is used exactly when the object starts
    threads (calls the runtime's parallel-region entry points), however the source spelled it
    (a pragma in dead code, or an omp_get_wtime call, does not count); SIMD, when checked,
    exactly when packed arithmetic or wide-register shuffles survive a build without
    auto-vectorization (a dead vector variable does not count, vector types under another name
    do). The other techniques have no such signal: the text decides. Without facts (nothing
    compiled), `detected`.

    >>> sorted(confirm({"simd", "loop_reorder"}, {"openmp": True, "simd": False}))
    ['loop_reorder', 'openmp']
    """
    out = set(detected)
    if not facts:
        return out
    applicable = problem_techniques(problem)
    for technique in ("openmp", "simd"):
        if facts.get(technique) is not None and technique in applicable:
            out = (out | {technique}) if facts[technique] else (out - {technique})
    return out
