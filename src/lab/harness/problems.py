"""Problem specs: load `harness/<name>/problem.toml` into a typed `Problem`.

A problem folder holds `problem.toml` (signature, prompt phrasings, flop count, the bytes one
call must move at least, sizes, tolerance, allowed headers, input/output shapes), `driver.c` (the C side of the
measurement, see harness/bench.h) and `reference.py` (a NumPy reference the
parent process uses to cross-check what the driver reports).

Prompt phrasings come in two disjoint sets: `train_prompts` (what training ever shows a
policy: the seed corpus, GRPO and SQD) and `eval_prompts` (held out for evaluation). Each
states the same specification in other words; text inside `{openmp:...}` (the permission
to use OpenMP and omp.h) is dropped in serial mode, and `{arch}` and `{isa}` name the
target tier (`render_phrasing`; lab.harness.target). Loading refuses a problem whose sets
overlap, whose phrasing lacks the signature or the target's slots, or that mentions OpenMP
outside the markup (a serial prompt would then permit it).

    >>> p = load_problem("dgemm")
    >>> p.function, p.default_n, p.flops(256) == 2 * 256**3
    ('dgemm', 256, True)
    >>> p.bytes(256) == p.working_set(256) == 3 * 8 * 256**2
    True
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from lab import paths
from lab.config import MODES
from lab.files import tree_hash
from lab.harness import target


class UnknownProblem(ValueError):
    """Raised for a problem name with no folder under harness/."""


class BadProblem(ValueError):
    """A problem.toml that cannot be used; the message is one line naming the file and why."""


#: The span of a phrasing that only OpenMP prompts keep: `{openmp:, and you may use OpenMP}`.
_OPENMP_SPAN = re.compile(r"\{openmp:([^{}]*)\}")
SPLITS = ("train", "eval")


#: The slots of a phrasing that name the target (lab.harness.target): its architecture and ISA.
_TARGET_SLOTS = ("{arch}", "{isa}")


def render_phrasing(text: str, openmp: bool, tier: str | None = None) -> str:
    """A phrasing as a prompt states it: with its `{openmp:...}` spans' text (OpenMP permitted)
    or without them (serial), and its `{arch}` and `{isa}` slots naming `tier` (None: the tier
    this process works at, lab.harness.target).

    >>> render_phrasing("a modern {arch} CPU with {isa}: math.h{openmp:, omp.h}.", openmp=False, tier="avx2")
    'a modern x86-64 CPU with AVX2 and FMA (no AVX-512): math.h.'
    """
    spec = target.TIERS[tier or target.current()]
    text = text.replace("{arch}", spec.arch_words).replace("{isa}", spec.isa_words)
    return _OPENMP_SPAN.sub(lambda m: m.group(1) if openmp else "", text)


def _normalized(text: str) -> str:
    return " ".join(render_phrasing(text, True, "avx512").split()).casefold()


def _check_phrasings(path: Path, signature: str, splits: dict[str, list[str]]) -> None:
    """The rules of the module docstring, one line per violation found first."""
    declaration = f"{signature};"
    for split, texts in splits.items():
        if not texts:
            raise BadProblem(f"{path}: {split}_prompts: list at least one phrasing")
        for i, text in enumerate(texts):
            where = f"{path}: {split}_prompts[{i}]"
            if not isinstance(text, str):
                raise BadProblem(f"{where}: expected text")
            serial = render_phrasing(text, False, "avx512")
            if "{" in serial or "}" in serial:
                raise BadProblem(f"{where}: unbalanced or unknown {{...}} markup (only {{openmp:...}} is known)")
            if re.search(r"openmp|\bomp(\b|_)", serial, re.IGNORECASE):
                raise BadProblem(f"{where}: mentions OpenMP outside {{openmp:...}}, so a serial prompt would permit it")
            if not all(slot in text for slot in _TARGET_SLOTS):
                raise BadProblem(
                    f"{where}: does not name the target ({' and '.join(_TARGET_SLOTS)}, lab.harness.target)"
                )
            if declaration not in " ".join(text.split()):
                raise BadProblem(f"{where}: does not state the signature `{declaration}`")
    train = {_normalized(t) for t in splits["train"]}
    for split, texts in splits.items():
        if len({_normalized(t) for t in texts}) < len(texts):
            raise BadProblem(f"{path}: {split}_prompts: a phrasing is repeated")
    shared = [i for i, t in enumerate(splits["eval"]) if _normalized(t) in train]
    if shared:
        raise BadProblem(f"{path}: eval_prompts[{shared[0]}] is also a training phrasing; held-out prompts must differ")


#: Element types of problem arrays, as problem.toml names them.
DTYPES = {"f64": np.float64, "i64": np.int64, "i32": np.int32, "u8": np.uint8}


@dataclass(frozen=True)
class ArraySpec:
    name: str
    shape: tuple[str, ...]  # each dimension an arithmetic expression in n, e.g. ("n", "n"), ("n+1",), ("256",)
    type: str = "f64"  # a key of DTYPES
    range: tuple[int, int] | None = None  # integers: the inclusive [lo, hi] they are drawn from

    def dims(self, n: int) -> tuple[int, ...]:
        return tuple(n if d == "n" else int(_compile_flops(d)(n)) for d in self.shape)

    def nbytes(self, n: int) -> int:
        """The array's size in bytes at size n."""
        return int(np.prod(self.dims(n), dtype=np.int64)) * np.dtype(DTYPES[self.type]).itemsize


def _array_spec(raw: dict) -> ArraySpec:
    kind = raw.get("type", "f64")
    if kind not in DTYPES:
        raise ValueError(f"array {raw['name']}: type {kind!r}; expected one of {', '.join(DTYPES)}")
    bounds = raw.get("range")
    return ArraySpec(raw["name"], tuple(raw["shape"]), kind, tuple(bounds) if bounds else None)


@dataclass(frozen=True)
class Problem:
    name: str
    function: str
    signature: str
    train_prompts: tuple[str, ...]  # phrasings with {openmp:...} markup (render_phrasing)
    eval_prompts: tuple[str, ...]  # held out: never shown in training
    flops_expr: str
    # The bytes one call must move at least (its compulsory traffic: each array read or written
    # once), an arithmetic expression in n; lab.harness.plausibility bounds the rate with it.
    bytes_expr: str
    default_n: int
    odd_n: int
    tolerance: float
    allowed_headers: tuple[str, ...]
    inputs: tuple[ArraySpec, ...]
    output: ArraySpec
    root: Path
    unit: str = "GFLOP/s"  # of the rate reported as `gflops`: work units (the `flops` formula) per ns
    # The optimization techniques that apply (names of lab.techniques.TECHNIQUES, which checks them).
    techniques: tuple[str, ...] = ()
    # Per execution model, a timed size other than default_n (problem.toml's `timed_n`, e.g.
    # {serial = 1000}), and why (`size_reason`): chosen where the headroom measurement
    # (lab.bench.headroom) found too little to gain at default_n.
    timed_sizes: tuple[tuple[str, int], ...] = ()
    size_reason: str = ""
    _flops: Callable[[int], float] = field(repr=False, compare=False, default=None)
    _bytes: Callable[[int], float] = field(repr=False, compare=False, default=None)

    @property
    def prompt(self) -> str:
        """The problem's first training phrasing, OpenMP permitted: its canonical prompt."""
        return render_phrasing(self.train_prompts[0], openmp=True)

    def phrasings(self, split: str) -> tuple[str, ...]:
        """The phrasings of one split (train | eval), with their markup."""
        if split not in SPLITS:
            raise ValueError(f"unknown prompt split {split!r}; known: {', '.join(SPLITS)}")
        return self.train_prompts if split == "train" else self.eval_prompts

    def timed_n(self, mode: str | None = None) -> int:
        """The size a call is timed at in execution model `mode`: problem.toml's `timed_n` for that
        mode where it names one, else default_n."""
        return dict(self.timed_sizes).get(mode, self.default_n)

    @property
    def driver_path(self) -> Path:
        return self.root / "driver.c"

    def flops(self, n: int) -> float:
        return float(self._flops(n))

    def bytes(self, n: int) -> float:
        """The bytes one call at size n must move at least (the `bytes` formula)."""
        return float(self._bytes(n))

    def working_set(self, n: int) -> int:
        """The bytes of the call's arrays at size n: every input and the output, by shape and type."""
        return sum(spec.nbytes(n) for spec in (*self.inputs, self.output))

    def fingerprint(self) -> str:
        """Hash of every file in the problem's folder (spec, driver, reference, examples)."""
        return tree_hash(self.root)

    def make_inputs(self, seed: int, n: int) -> list[np.ndarray]:
        """The exact inputs the driver generates for (seed, n): the problem's own `make_inputs` in
        reference.py where its driver has a generator of its own (a sparse structure), else
        stream k of the seed for input k (bench_fill and its integer siblings)."""
        custom = getattr(_reference_module(self.root), "make_inputs", None)
        if custom is not None:
            return custom(seed, n)
        return [generate(seed, stream, spec.dims(n), spec.type, spec.range) for stream, spec in enumerate(self.inputs)]

    def reference(self, seed: int, n: int) -> np.ndarray:
        """The reference output for the driver's inputs at (seed, n)."""
        return _reference_fn(self.root)(*self.make_inputs(seed, n))


#: The AES key of a call is (seed, _KEY_TAG), both little-endian: harness/bench.h's BENCH_KEY_TAG.
_KEY_TAG = 0x6C61622D61657321


def stream_key(seed: int, stream: int) -> tuple[bytes, int]:
    """bench_stream_key() of harness/bench.h: the AES-128 key of a call and the stream index."""
    return (seed % 2**64).to_bytes(8, "little") + _KEY_TAG.to_bytes(8, "little"), stream


def draw(key: tuple[bytes, int], count: int, start: int = 0) -> np.ndarray:
    """bench_draw(key, i) for i in [start, start + count): value i of a stream is the i-th
    little-endian u64 of AES-128-CTR with counter block stream * 2^64 + i // 2 (big-endian)."""
    aes, stream = key
    first = start // 2
    blocks = (start + count + 1) // 2 - first
    nonce = ((stream << 64) | first).to_bytes(16, "big")
    encryptor = Cipher(algorithms.AES(aes), modes.CTR(nonce)).encryptor()
    stream_bytes = encryptor.update(bytes(16 * blocks))
    return np.frombuffer(stream_bytes, dtype="<u8")[start - 2 * first :][:count].astype(np.uint64)


def generate(
    seed: int, stream: int, shape: tuple[int, ...], dtype: str = "f64", bounds: tuple[int, int] | None = None
) -> np.ndarray:
    """Stream `stream` of `seed` as the driver fills it: doubles uniform in [-1, 1) (bench_fill),
    integers in `bounds` (bench_fill_i64 / _i32), or bytes (bench_fill_u8)."""
    z = draw(stream_key(seed, stream), int(np.prod(shape)))
    if dtype == "f64":
        out = (z >> np.uint64(11)).astype(np.float64) * (2.0 / 9007199254740992.0) - 1.0
    elif dtype == "u8":
        out = (z >> np.uint64(56)).astype(np.uint8)
    else:
        lo, hi = bounds if bounds else (0, 255)
        out = (np.int64(lo) + (z % np.uint64(hi - lo + 1)).astype(np.int64)).astype(DTYPES[dtype])
    return out.reshape(shape)


def _compile_flops(expr: str, what: str = "flops") -> Callable[[int], float]:
    """Turn a flop-count (or byte-count, shape) formula in n into a function, allowing only
    arithmetic on n; `what` names the formula in the error."""
    tree = ast.parse(expr, mode="eval")
    allowed = (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.Constant,
        ast.Name,
        ast.Load,
        ast.Add,
        ast.Sub,
        ast.Mult,
        ast.Div,
        ast.Pow,
        ast.USub,
        ast.FloorDiv,
    )
    for node in ast.walk(tree):
        bad_constant = isinstance(node, ast.Constant) and type(node.value) not in (int, float)
        if not isinstance(node, allowed) or bad_constant or (isinstance(node, ast.Name) and node.id != "n"):
            raise ValueError(f"{what} formula {expr!r}: only arithmetic on n is allowed")
    code = compile(tree, "<flops>", "eval")
    return lambda n: eval(code, {"__builtins__": {}}, {"n": n})  # noqa: S307 - AST checked above


@cache
def _reference_module(root: Path):
    spec = importlib.util.spec_from_file_location(f"lab_reference_{root.name}", root / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference_fn(root: Path) -> Callable[..., np.ndarray]:
    return _reference_module(root).reference


def harness_fingerprint() -> str:
    """Hash of the C harness shared by all problems: every file of harness/ outside the problem folders."""
    root = paths.harness_dir()
    return tree_hash(root, skip=frozenset(list_problems()))


def list_problems() -> list[str]:
    return sorted(p.parent.name for p in paths.harness_dir().glob("*/problem.toml"))


@cache
def load_problem(name: str) -> Problem:
    """Load harness/<name>/problem.toml; raises UnknownProblem with the known names."""
    path = paths.harness_dir() / str(name) / "problem.toml"
    # Only folder names under harness/: a name is never a path to somewhere else.
    if not isinstance(name, str) or name not in list_problems():
        raise UnknownProblem(f"unknown problem {name!r}; known: {', '.join(list_problems()) or 'none'}")
    raw = tomllib.loads(path.read_text())
    splits = {s: list(raw.get(f"{s}_prompts") or []) for s in SPLITS}
    _check_phrasings(path, raw["signature"], splits)
    count_bytes = _bytes_formula(path, raw)
    return Problem(
        name=raw["name"],
        function=raw["function"],
        signature=raw["signature"],
        train_prompts=tuple(splits["train"]),
        eval_prompts=tuple(splits["eval"]),
        flops_expr=raw["flops"],
        bytes_expr=raw["bytes"],
        default_n=int(raw["default_n"]),
        odd_n=int(raw["odd_n"]),
        tolerance=float(raw["tolerance"]),
        allowed_headers=tuple(raw["allowed_headers"]),
        inputs=tuple(_array_spec(a) for a in raw["inputs"]),
        output=_array_spec(raw["output"]),
        root=path.parent,
        unit=raw.get("unit", "GFLOP/s"),
        techniques=tuple(raw.get("techniques", ())),
        timed_sizes=_timed_sizes(path, raw),
        size_reason=str(raw.get("size_reason", "")),
        _flops=_compile_flops(raw["flops"]),
        _bytes=count_bytes,
    )


def _timed_sizes(path: Path, raw: dict) -> tuple[tuple[str, int], ...]:
    """problem.toml's optional `timed_n` table (execution model -> size), checked: known modes,
    positive integers, and a `size_reason` saying why."""
    sizes = raw.get("timed_n", {})
    if not isinstance(sizes, dict):
        raise BadProblem(f"{path}: timed_n: expected a table like {{serial = 1000}}")
    for mode, n in sizes.items():
        if mode not in MODES:
            raise BadProblem(f"{path}: timed_n: unknown execution model {mode!r} (known: {', '.join(MODES)})")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise BadProblem(f"{path}: timed_n.{mode}: expected a positive integer, got {n!r}")
    if sizes and not str(raw.get("size_reason", "")).strip():
        raise BadProblem(f"{path}: timed_n: say why in size_reason (the measured headroom that chose it)")
    return tuple(sorted(sizes.items()))


def _bytes_formula(path: Path, raw: dict) -> Callable[[int], float]:
    """The compiled `bytes` formula of a problem.toml: present, arithmetic on n, and positive at
    the problem's sizes, else a one-line BadProblem."""
    expr = raw.get("bytes")
    if not isinstance(expr, str) or not expr.strip():
        raise BadProblem(
            f"{path}: bytes: missing; give the bytes one call must move at least, an arithmetic "
            'expression in n like `bytes = "16 * n**2"` (harness/README.md, "Adding a problem")'
        )
    try:
        formula = _compile_flops(expr, "bytes")
        sizes = [int(raw[k]) for k in ("default_n", "odd_n") if k in raw]
        if any(not formula(n) > 0 for n in sizes):
            raise ValueError(f"bytes formula {expr!r} is not positive at n = {', '.join(map(str, sizes))}")
    except (SyntaxError, ValueError, ArithmeticError, TypeError) as err:
        raise BadProblem(f"{path}: bytes: {' '.join(str(err).split())}") from None
    return formula
