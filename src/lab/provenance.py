"""What made a result: the measurement version of the code, the git commit, the policy's weights.

    >>> len(measurement_version())
    16

A result is reused while what could change its numbers is unchanged, and only then
(lab.pipeline.reuse decides, from these facts and the machine's). The code's part of that
is the *measurement version*: a hash of the modules on the measuring and training paths
(`MEASURED`: the harness's Python and C, the technique detector, prompts and sampling, the
reward, SQD and training, the runner's protocol, the metrics) in a form that ignores what
cannot change a number: Python is hashed as its token stream without comments, blank lines
and docstrings; C as its text without comments, with runs of blanks folded; TOML as the data
it parses to. So a reflowed docstring, a new comment or a moved blank line keep every result
current, while any change to a statement on a timed path stales the results it made.

Outside the version on purpose: the config schema (lab.config: a config's values are compared
themselves, normalised, so a new field at its default changes nothing), the seed policy's
builder (the policy's weights are compared by their sha256 instead; its kernel generator is in
the version, as it writes the autotuner's space and the warm start's demonstrations), the
analysis that only reads results, benchmarks of the lab's own tools, the command line, and example kernels
(they are never on a timed path; the problem's spec, driver and reference are).

`git_facts()` records the commit and whether the tree differed from it (the dirty flag);
`policy_sha256(model)` hashes a local policy's weights with its tokenizer and generation
settings (None for a hub id not on disk).
This module is in the bottom layer: it reads files, and imports nothing of the lab but paths.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import subprocess
import textwrap
import tokenize
import tomllib
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from lab import paths

#: The lab package's modules on the measuring and training paths (files, or folders taken
#: whole), relative to the package. tests/test_provenance.py checks that every lab module the
#: runner imports is either here or in NOT_MEASURED, so a new module cannot slip out of both.
MEASURED = (
    "harness",
    "techniques.py",
    "policy/prompts.py",
    "policy/sample.py",
    "rl",
    "pipeline/runner.py",
    "analysis/metrics.py",
    "analysis/intervals.py",
    # What makes the reports that are results too (the seed policy's report, the autotuner's).
    "policy/seed_policy/report.py",
    "bench/autotune.py",
    # The kernel generator: the autotuner's space, and the warm start's demonstrations, written
    # in the seed policy's answer forms (corpus.as_completion).
    "policy/seed_policy/generator.py",
    "policy/seed_policy/problems",
    "policy/seed_policy/c_writer.py",
    "policy/seed_policy/corpus.py",
)

#: Modules whose functions and methods are measured, but not the rest (their fields are compared
#: as a config's values, normalised against the defaults).
BEHAVIOUR = ("config.py",)

#: Modules the runner imports that cannot change a number (with why), the complement of MEASURED.
NOT_MEASURED = {
    "config.py": "a config's values are compared themselves; its functions are in BEHAVIOUR",
    "files.py": "atomic writing and reading of result files",
    "paths.py": "where the harness and the cache are",
    "provenance.py": "computes these facts",
    "results.py": "where a config's results live, and reading them",
    "pipeline/reuse.py": "decides reuse from these facts",
    "pipeline/plan.py": "the order arms run in, and what they cost",
    "analysis/dynamics.py": "tallies training samples already recorded (dynamics.json is redrawn from them)",
    "analysis/compare.py": "compares finished arms, and counts the batches a budget generates (for plan.py)",
    "policy/seed_policy": "builds the policy, whose weights are compared by their sha256 (its kernel generator is measured)",
}

#: Files under harness/ left out of the version: documentation and example kernels.
_HARNESS_SKIP = re.compile(r"(^|/)examples/|\.md$")


def _python_digest(text: str) -> bytes:
    """The token stream of a module without comments, blank lines and docstrings."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text.encode()  # not Python that runs: any change to it counts
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstrings.add((first.lineno, first.col_offset))
    out, after_docstring = [], False
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.STRING and tok.start in docstrings:
            after_docstring = True
            continue
        if after_docstring:  # the docstring's own end of statement goes with it (`;` or newline)
            after_docstring = False
            if tok.type == tokenize.NEWLINE or (tok.type == tokenize.OP and tok.string == ";"):
                continue
        # Indentation counts as structure (INDENT/DEDENT), not as its exact blanks.
        out.append(tokenize.tok_name[tok.type] if tok.type in (tokenize.INDENT, tokenize.DEDENT) else tok.string)
    return "\x00".join(out).encode()


#: C comments and the literals they may not start inside (a "//" in a string is no comment).
_C_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


def _c_digest(text: str) -> bytes:
    """C without comments, each line's blanks folded, blank lines dropped."""
    code = _C_TOKENS.sub(lambda m: " " if m.group().startswith("/") else m.group(), text)
    lines = (re.sub(r"[ \t]+", " ", line).strip() for line in code.splitlines())
    return "\n".join(line for line in lines if line).encode()


def _behaviour_digest(text: str) -> bytes:
    """Only the functions and methods of a module, each as _python_digest reads it: for
    lab.config, whose fields are compared as a config's values, but whose methods (the threads
    of a mode, the CPUs an evaluation holds) are behaviour on the measuring path."""
    tree = ast.parse(text)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    parts = sorted(
        _python_digest(textwrap.dedent(ast.get_source_segment(text, n, padded=True) or "")) for n in functions
    )
    return b"\x01".join(parts)


def _toml_digest(text: str) -> bytes:
    try:
        return json.dumps(tomllib.loads(text), sort_keys=True).encode()
    except tomllib.TOMLDecodeError:
        return text.encode()


_DIGESTS: dict[str, Callable[[str], bytes]] = {
    ".py": _python_digest,
    ".c": _c_digest,
    ".h": _c_digest,
    ".toml": _toml_digest,
}


def source_digest(path: Path) -> bytes:
    """A file's content in the form the version hashes (raw bytes for other kinds of file)."""
    digest = _DIGESTS.get(path.suffix)
    return digest(path.read_text(errors="replace")) if digest else path.read_bytes()


def _files(root: Path, entries: Iterable[str]) -> list[Path]:
    found: list[Path] = []
    for entry in entries:
        path = root / entry
        found += sorted(p for p in path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else []
    return [p for p in found if "__pycache__" not in p.parts]


def _package_digest(package_dir: Path) -> bytes:
    h = hashlib.sha256()
    # The modules' digests in sorted order, without their names: moving code between measured
    # modules changes no number, so it keeps the version.
    digests = [hashlib.sha256(source_digest(p)).digest() for p in _files(package_dir, MEASURED)]
    digests += [hashlib.sha256(_behaviour_digest(p.read_text())).digest() for p in _files(package_dir, BEHAVIOUR)]
    for digest in sorted(digests):
        h.update(digest)
    return h.digest()


def _harness_digest(harness_dir: Path) -> bytes:
    h = hashlib.sha256()
    for path in sorted(p for p in harness_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(harness_dir).as_posix()
        if not _HARNESS_SKIP.search(rel):
            h.update(b"harness/" + rel.encode() + b"\0" + _file_digest(path) + b"\0")
    return h.digest()


#: source_digest of each file read, by path and what stat says of it: the harness is hashed on
#: every evaluation batch, and re-reading unchanged files would cost more than the cache hit it keys.
_DIGESTS_SEEN: dict[tuple, bytes] = {}


def _file_digest(path: Path) -> bytes:
    st = path.stat()
    key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS_SEEN:
        _DIGESTS_SEEN[key] = hashlib.sha256(source_digest(path)).digest()
    return _DIGESTS_SEEN[key]


def compute_measurement_version(package_dir: Path, harness_dir: Path) -> str:
    """The measurement version of the lab package in `package_dir` with the C harness in `harness_dir`."""
    return hashlib.sha256(_package_digest(package_dir) + _harness_digest(harness_dir)).hexdigest()[:16]


@cache
def _this_package() -> bytes:
    # Once per process: the Python that runs is the Python that was imported, whatever the files
    # on disk say later (a long-lived cluster worker reports the code it loaded).
    return _package_digest(Path(__file__).resolve().parent)


def measurement_version() -> str:
    """This process's measurement version: the lab package it imported, and the C harness that
    `paths.harness_dir()` holds now (a few milliseconds: it is what the next kernel is built from)."""
    return hashlib.sha256(_this_package() + _harness_digest(paths.harness_dir())).hexdigest()[:16]


def _git(*args: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True, cwd=cwd or Path(__file__).parent, timeout=30
        )
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    return done.stdout


def git_facts() -> dict:
    """{"commit": HEAD or "unknown", "dirty": whether the lab's code or harness differs from it (None: no git)}."""
    commit = (_git("rev-parse", "HEAD") or "").strip() or "unknown"
    root = paths.repo_root()
    status = _git("status", "--porcelain", "--", "src", "harness", cwd=root) if root else None
    return {"commit": commit, "dirty": None if status is None else bool(status.strip())}


#: The files of a policy folder that hold its weights.
_WEIGHTS = ("*.safetensors", "*.bin", "*.pt")
#: And those that change what it writes besides them: architecture, tokenizer, chat template,
#: generation defaults (not its card, training log or corpus).
_BESIDE = ("config.json", "generation_config.json", "tokenizer*.json", "special_tokens_map.json", "chat_template.*")


def policy_sha256(model: str | Path) -> str | None:
    """sha256 of a local policy's weights, with its config, tokenizer, chat template and
    generation defaults (by file name order), or None where `model` is not a folder with weights
    here (a hub id is named by its id; a config names only a path)."""
    folder = Path(model)
    weights = {p for pattern in _WEIGHTS for p in folder.glob(pattern)} if folder.is_dir() else set()
    if not weights:
        return None
    files = sorted(weights | {p for pattern in _BESIDE for p in folder.glob(pattern)})
    stat = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _policy_sha256(folder.resolve(), stat)


@cache
def _policy_sha256(folder: Path, stat: tuple) -> str:
    h = hashlib.sha256()
    for name, _, _ in stat:
        with open(folder / name, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


@cache
def exact_code() -> str:
    """Hash of the lab package and the C harness byte for byte (comments too): what a training
    run's checkpoints are resumed by, stricter than the measurement version, since a checkpoint
    holds optimizer state of one exact code path."""
    from lab.files import tree_hash

    return tree_hash(Path(__file__).resolve().parent) + "-" + tree_hash(paths.harness_dir())
