"""Problem specs: load `harness/<name>/problem.toml` into a typed `Problem`.

A problem folder holds `problem.toml` (signature, prompt, flop count, sizes,
tolerance, allowed headers, input/output shapes), `driver.c` (the C side of the
measurement, see harness/bench.h) and `reference.py` (a NumPy reference the
parent process uses to cross-check what the driver reports).

    >>> p = load_problem("dgemm")
    >>> p.function, p.default_n, p.flops(256) == 2 * 256**3
    ('dgemm', 256, True)
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import tomllib
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from lab import paths
from lab.files import tree_hash


class UnknownProblem(ValueError):
    """Raised for a problem name with no folder under harness/."""


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
    prompt: str
    flops_expr: str
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
    _flops: Callable[[int], float] = field(repr=False, compare=False, default=None)

    @property
    def driver_path(self) -> Path:
        return self.root / "driver.c"

    def flops(self, n: int) -> float:
        return float(self._flops(n))

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


def _compile_flops(expr: str) -> Callable[[int], float]:
    """Turn a flop-count formula in n into a function, allowing only arithmetic on n."""
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
            raise ValueError(f"flops formula {expr!r}: only arithmetic on n is allowed")
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
    return Problem(
        name=raw["name"],
        function=raw["function"],
        signature=raw["signature"],
        prompt=raw["prompt"],
        flops_expr=raw["flops"],
        default_n=int(raw["default_n"]),
        odd_n=int(raw["odd_n"]),
        tolerance=float(raw["tolerance"]),
        allowed_headers=tuple(raw["allowed_headers"]),
        inputs=tuple(_array_spec(a) for a in raw["inputs"]),
        output=_array_spec(raw["output"]),
        root=path.parent,
        unit=raw.get("unit", "GFLOP/s"),
        techniques=tuple(raw.get("techniques", ())),
        _flops=_compile_flops(raw["flops"]),
    )
