"""Completion text -> C source of the required function, or a FormatError.

A completion is either raw C or a chat answer with fenced code blocks. The first
C-like fenced block that defines the required function wins; blocks in other
languages (```bash ...```) are ignored. A block cut off by the generation limit
(an opening fence with no closing one) is still read. The definition must match
the problem's signature up to parameter names and qualifiers (const, restrict),
which do not change the calling convention.

    >>> extract_source("```c\\nvoid f(int n, double *x) { x[0] = n; }\\n```",
    ...                "void f(int n, double *x)")
    'void f(int n, double *x) { x[0] = n; }\\n'
    >>> try:
    ...     extract_source("I cannot help with that.", "void f(int n, double *x)")
    ... except FormatError as err:
    ...     print(err)
    no definition of f() found
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+#.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)
_C_LANGS = {"", "c", "c99", "c11", "c17", "h", "gnu", "gnuc"}
_QUALIFIERS = {"const", "restrict", "__restrict", "__restrict__", "volatile", "register"}


class FormatError(ValueError):
    """The completion holds no function with the required signature."""


def _split_signature(signature: str) -> tuple[str, str, list[str]]:
    m = re.match(r"\s*(.*?)\b([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*$", signature, re.S)
    if not m:
        raise ValueError(f"bad signature {signature!r}")
    return m.group(2), m.group(1), [p for p in m.group(3).split(",") if p.strip()]


def _normalize_type(text: str, drop_name: bool) -> str:
    """'const double *restrict A' -> 'double*'; 'double A[]' -> 'double*'."""
    text = re.sub(r"\b[A-Za-z_]\w*\s*\[[^\]]*\]", "*", text)  # array parameter: drop its name
    tokens = re.findall(r"[A-Za-z_]\w*|\*", text)
    tokens = [t for t in tokens if t not in _QUALIFIERS and t not in ("static", "inline", "extern")]
    if drop_name and len(tokens) >= 2 and tokens[-1] != "*":
        # The last identifier is the parameter name unless the type is a bare keyword pair.
        if tokens[-1] not in ("int", "double", "float", "long", "char", "short", "unsigned", "void"):
            tokens = tokens[:-1]
    return "".join(t if t == "*" else f" {t}" for t in tokens).strip().replace(" *", "*")


def _definition_pattern(function: str) -> re.Pattern[str]:
    # return type, name, parameter list without nested parentheses, then a body.
    return re.compile(
        # [ \t]* (not \s*) after the anchor: each line start is an anchor of its own, and \s* there
        # made a run of blank lines cost quadratic time.
        r"(^|[;}\n])[ \t]*((?:[A-Za-z_]\w*[\s*]+)+?)\b"
        + re.escape(function)
        + r"\s*\(([^()]*)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{",
        re.S,
    )


def code_blocks(completion: str) -> list[str]:
    """The C-like fenced blocks of a completion, or the whole text when it has none."""
    if "```" not in completion:
        return [completion]
    return [body for lang, body in _FENCE.findall(completion) if lang.lower() in _C_LANGS]


def extract_source(completion: str, signature: str) -> str:
    """Return the C source that defines the function of `signature` (see module doc)."""
    function, ret, params = _split_signature(signature)
    want_params = [_normalize_type(p, drop_name=True) for p in params]
    want_ret = _normalize_type(ret, drop_name=False)
    pattern = _definition_pattern(function)
    mismatch = None
    for block in code_blocks(completion):
        for m in pattern.finditer(block):
            got_ret = _normalize_type(m.group(2), drop_name=False)
            got_params = [_normalize_type(p, drop_name=True) for p in m.group(3).split(",") if p.strip()]
            if got_params == ["void"]:
                got_params = []
            if got_ret == want_ret and got_params == want_params:
                return block
            mismatch = f"{function}() has signature ({', '.join(got_params)}) -> {got_ret}; required: {signature}"
    raise FormatError(mismatch or f"no definition of {function}() found")


def defines(code: str, function: str) -> bool:
    """Whether `code` holds a definition of `function`, with any signature (a call or a mention
    is not one)."""
    return _definition_pattern(function).search(code) is not None


def source_or_none(completion: str, signature: str) -> str | None:
    """extract_source, or None where it raises FormatError (for callers that only look)."""
    try:
        return extract_source(completion, signature)
    except FormatError:
        return None
