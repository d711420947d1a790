"""The vector ISA tier kernels are written for, compiled for and measured at.

    >>> [t.name for t in TIERS.values() if t.arch == "x86_64"]
    ['sse4', 'avx2', 'avx512']
    >>> TIERS["avx2"].march
    ('-march=x86-64-v3', '-mtune=native')

A tier is a set of vector instructions a CPU has: on x86-64 `avx512` (AVX-512 F/DQ/BW/VL, the
x86-64-v4 level), `avx2` (AVX2 and FMA, x86-64-v3: an AMD Zen 3, an Intel Haswell), `sse4`
(SSE4.2, x86-64-v2); on aarch64 `neon`. `native()` is this machine's own tier, read once from
/proc/cpuinfo. `current()` is the tier this process works at: the native one, or the lower tier
of the same architecture that `LAB_TARGET` names (`use(name)` sets it for this process and the
ones it starts). A forced tier reproduces another CPU's instruction set, not its speed: kernels
and drivers are compiled with the tier's `-march` level (instructions above it are compile
errors, as on that CPU), target pragmas and attributes that name instructions above it are
refused (lab.harness.static_check), the object is scanned for them, prompts name the tier, and
the OpenBLAS reference and the peak are measured at it. A forced tier is a machine class of its
own (lab.harness.machine.machine_class); the native tier adds nothing to the class, so results
recorded before tiers existed keep theirs.

This module is in the harness's bottom layer: it reads /proc/cpuinfo and the environment.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from functools import cache

#: The environment variable that forces a lower tier.
ENV = "LAB_TARGET"

#: The x86 headers of intrinsics a prompt that allows immintrin.h allows with it: each is a part
#: of immintrin.h (x86intrin.h is not: it adds the time-stamp counter; wmmintrin.h's AES and the
#: private *intrin.h files that GCC refuses to be included directly are not kernels' business).
X86_INTRINSIC_HEADERS = (
    "immintrin.h",
    "mmintrin.h",
    "xmmintrin.h",
    "emmintrin.h",
    "pmmintrin.h",
    "tmmintrin.h",
    "smmintrin.h",
    "nmmintrin.h",
)

#: GCC target("...") features of the x86-64-v2 and -v3 levels (gcc's own names), which a target
#: pragma or attribute may name under a forced tier; anything else (an AVX-512 feature, `arch=`)
#: would bring back what the tier leaves out. Turning a feature off (`no-...`) is always allowed.
_V2 = frozenset({"mmx", "sse", "sse2", "sse3", "ssse3", "sse4", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf", "fxsr"})
_V3 = _V2 | {"avx", "avx2", "fma", "bmi", "bmi2", "f16c", "lzcnt", "abm", "movbe", "xsave"}


@dataclass(frozen=True)
class Tier:
    """One tier: its architecture, what a prompt calls it, how a forced build targets it, what a
    target pragma may name under it (None: anything, the tier is the top of its architecture),
    and the OpenBLAS core type of the same instructions (OPENBLAS_CORETYPE)."""

    name: str
    arch: str  # platform.machine()
    arch_words: str  # the prompt's architecture: "x86-64"
    isa_words: str  # the prompt's instruction set: "AVX-512"
    march: tuple[str, ...]  # compiler flags when this tier is forced below the machine's own
    features: frozenset[str] | None
    openblas_coretype: str | None
    rank: int  # order within the architecture: a tier may be forced only at or below the native one


TIERS = {
    t.name: t
    for t in (
        Tier("sse4", "x86_64", "x86-64", "SSE4.2 (no AVX)", ("-march=x86-64-v2", "-mtune=native"), _V2, "Nehalem", 0),
        Tier(
            "avx2",
            "x86_64",
            "x86-64",
            "AVX2 and FMA (no AVX-512)",
            ("-march=x86-64-v3", "-mtune=native"),
            _V3,
            "Haswell",
            1,
        ),
        Tier("avx512", "x86_64", "x86-64", "AVX-512", ("-march=x86-64-v4", "-mtune=native"), None, "SkylakeX", 2),
        Tier("neon", "aarch64", "AArch64", "NEON", ("-march=armv8-a", "-mtune=native"), None, "ARMV8", 0),
    )
}


class UnsupportedMachine(RuntimeError):
    """No tier the lab supports, or a LAB_TARGET this machine cannot work at: one line to show."""


def cpu_flags() -> set[str]:
    """The CPU's feature flags as /proc/cpuinfo lists them (empty where it cannot be read)."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return set()
    # x86 lists "flags", aarch64 "Features".
    line = next((ln for ln in text.splitlines() if ln.startswith(("flags", "Features"))), "")
    return set(line.split(":", 1)[1].split()) if ":" in line else set()


@cache
def native() -> str:
    """This machine's own tier; UnsupportedMachine where it has none the lab supports."""
    arch, flags = platform.machine(), cpu_flags()
    if arch in ("x86_64", "AMD64"):
        if {"avx512f", "avx512dq", "avx512bw", "avx512vl"} <= flags:
            return "avx512"
        if {"avx2", "fma", "bmi2"} <= flags:
            return "avx2"
        if {"sse4_2", "popcnt"} <= flags:
            return "sse4"
    elif arch in ("aarch64", "arm64") and ("asimd" in flags or not flags):
        return "neon"
    raise UnsupportedMachine(
        f"this {arch} CPU has no vector ISA tier the lab supports (x86-64: SSE4.2 or above; aarch64: NEON)"
    )


def current() -> str:
    """The tier this process works at: LAB_TARGET's, else the native one. Raises
    UnsupportedMachine (one line) for an unknown tier, one of another architecture, or one above
    this machine's own."""
    return _workable(os.environ.get(ENV, "").strip())


def _workable(wanted: str) -> str:
    """`wanted` (empty: the native tier) when this machine can work at it; else UnsupportedMachine."""
    own = native()
    if not wanted or wanted == own:
        return own
    tier = TIERS.get(wanted)
    here = TIERS[own]
    if tier is None:
        raise UnsupportedMachine(f"{ENV}={wanted}: unknown tier; known: {', '.join(TIERS)}")
    if tier.arch != here.arch or tier.rank > here.rank:
        below = [t.name for t in TIERS.values() if t.arch == here.arch and t.rank <= here.rank]
        raise UnsupportedMachine(f"{ENV}={wanted}: this machine can work at {', '.join(below)} (its own: {own})")
    return wanted


def forced() -> bool:
    """Whether this process works below its machine's own tier."""
    return current() != native()


def use(name: str | None) -> None:
    """Work at tier `name` from now on, in this process and the ones it starts (None or the
    native tier: the machine's own). Checked as `current` checks LAB_TARGET, before anything
    changes."""
    if name is None or _workable(name) == native():
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = name


def tier() -> Tier:
    """The Tier this process works at."""
    return TIERS[current()]


def march_flags(name: str | None = None) -> tuple[str, ...]:
    """The compiler's target flags at tier `name` (None: the current one): the machine's own
    (-march=native) at its native tier, the tier's level (tuned for this machine) below it."""
    name = name or current()
    return ("-march=native",) if name == native() else TIERS[name].march


def intrinsic_headers() -> tuple[str, ...]:
    """The headers of vector intrinsics a prompt that allows them means on this architecture."""
    return ("arm_neon.h",) if tier().arch == "aarch64" else X86_INTRINSIC_HEADERS


def refused_features(text: str) -> list[str]:
    """The features a `target("...")` string (a pragma's or an attribute's) names above the
    current tier: none at the tier the machine has natively (its compiler flags allow them all
    anyway), else every feature outside the tier's set, `arch=` included."""
    allowed = tier().features if forced() else None
    if allowed is None:
        return []
    out = []
    for feature in (f.strip().lower() for f in text.split(",")):
        if not feature or feature.startswith(("no-", "tune=")):
            continue
        if feature not in allowed:
            out.append(feature)
    return out
