"""Static checks of candidate code: the first layer of defence, before anything runs.

Three passes, each returning a `Violation` (usually status `forbidden`) or None:

- `check_source(source, problem)`: the text as written: includes outside the
  problem's allow-list (computed includes too), inline assembly, and
  identifiers of calls that reach outside the computation or into BLAS;
- `check_preprocessed(text, filename, problem, cc=...)` (or `check_preprocessed_file`,
  which streams gcc's output with a size cap): the candidate's own lines after
  macro expansion (token pasting cannot hide a name from this pass): the same
  identifier rules, compiler builtins on an exact allow-list, every `#pragma`
  (so `_Pragma` and macros cannot hide one) with OpenMP limited to the
  constructs in `OPENMP_DIRECTIVES` and `OPENMP_CLAUSES`, and the headers that
  were really included: each must be an allowed name found in one of the
  directories the compiler `cc` itself searches for `#include <...>`
  (`compiler_include_dirs`), wherever the toolchain is installed;
- `check_object(path, problem, scratch)`: the compiled object, the ground truth,
  inspected with one call of each binutils tool: undefined symbols on an exact
  allow-list (libgomp's entry points included), no definition that would
  interpose a symbol of libc, libm, libgomp or the runner, no constructors,
  destructors or unusual sections, no data in code sections, and no system-call,
  indirect-branch or machine-state instruction. Other exported helpers are fine:
  the build localizes every symbol but the required one (`objcopy
  --keep-global-symbol`), so they cannot reach anything.

Every pass is bounded: sources, preprocessed output, the candidate's own
expanded lines and object code have size caps (below), and tools run with a
time and memory limit, so no source costs the parent more than a few seconds.

These checks cannot see everything (a crafted memory-corruption exploit is out of
their reach); the runner's seccomp filter and the process split contain what they
miss (see harness/bench.h and the README's threat model).

    >>> from lab.harness.problems import load_problem
    >>> check_source('#include <stdio.h>\\nvoid dgemm(){}', load_problem("dgemm")).detail
    'includes <stdio.h>, which is not allowed (allowed: stddef.h, stdint.h, stdlib.h, string.h, math.h, omp.h, immintrin.h, stdbool.h, float.h, limits.h)'
"""

from __future__ import annotations

import functools
import os
import re
import resource
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lab.harness import target
from lab.harness.build import BuildConfig
from lab.harness.problems import Problem

#: Calls that reach outside the computation: processes, files, I/O, sockets, signals,
#: dynamic loading, raw system calls, leaving the process, timers and the environment.
FORBIDDEN_CALLS = frozenset(
    """
    fork vfork clone clone3 execl execle execlp execv execve execvp execvpe fexecve system popen pclose
    posix_spawn posix_spawnp daemon wait waitpid wait3 wait4 waitid
    fopen fopen64 freopen fdopen fclose fread fwrite fputs fputc fgets fgetc fflush fprintf fscanf
    printf vprintf vfprintf dprintf sprintf snprintf puts putchar putc perror scanf sscanf getchar
    open open64 openat creat read write pread pwrite readv writev close lseek dup dup2 dup3 pipe pipe2
    unlink unlinkat remove rename renameat mkdir rmdir chdir chmod chown truncate ftruncate symlink link
    mkstemp mkfifo tmpfile ioctl fcntl mmap mmap64 munmap mprotect mremap madvise brk sbrk shm_open shmget shmat
    socket connect bind listen accept accept4 send sendto sendmsg recv recvfrom recvmsg socketpair
    signal sigaction raise kill killpg tgkill tkill alarm pause sigqueue setitimer sigprocmask
    dlopen dlsym dlvsym dlclose dladdr dlerror syscall ptrace prctl seccomp personality setrlimit
    exit _exit _Exit abort atexit at_quick_exit quick_exit on_exit setjmp longjmp sigsetjmp siglongjmp
    getenv secure_getenv setenv putenv unsetenv environ __environ
    clock clock_gettime clock_getres gettimeofday time times getrusage omp_get_wtime omp_get_wtick
    __rdtsc __rdtscp _rdtsc sleep usleep nanosleep clock_nanosleep sched_yield
    getpid getppid gettid setuid setgid setsid setpgid sched_setaffinity pthread_create
    omp_set_num_threads omp_set_dynamic
    __builtin_frame_address __builtin_return_address __builtin_extract_return_addr
    __builtin_apply __builtin_apply_args __builtin_longjmp __builtin_setjmp
    __libc_start_main __libc_csu_init _init _fini main
""".split()
)

#: BLAS and LAPACK in any common spelling (CBLAS, Fortran trailing underscore, vendors).
_BLAS = re.compile(
    r"^(cblas_\w+|openblas_\w+|mkl_\w+|MKL_\w+|bli_\w+|LAPACKE_\w+|lapack_\w+|catlas_\w+"
    r"|[sdcz](gemm|gemv|symm|syrk|syr2k|trmm|trsm|ger|axpy|dot|scal|copy|swap|nrm2|asum)_+)$"
)

#: Size caps in bytes. Real kernels are far below each: the largest example is 6 KB of source,
#: and immintrin.h makes gcc -E output about 2 MB.
MAX_COMPLETION_BYTES = 256 * 1024  # the whole completion text
MAX_SOURCE_BYTES = 64 * 1024  # the extracted C source
MAX_PREPROCESSED_BYTES = 16 * 1024 * 1024  # gcc -E output (a cap on the sandboxed step's file size)
MAX_OWN_EXPANDED_BYTES = 128 * 1024  # the candidate's own lines after macro expansion
MAX_CODE_BYTES = 1024 * 1024  # machine code in the object
#: Limits of each binutils call on a candidate object.
TOOL_TIMEOUT_S = 10.0
TOOL_MEMORY_MB = 1024

#: Compiler builtins a kernel may call (besides the vector ones of `__builtin_ia32_*`, see
#: _DENIED_IA32, and the `__atomic_*` / `__sync_*` families). Everything else is `forbidden`:
#: control flow that reaches libc (__builtin_apply, __builtin_longjmp, __builtin_call_with_static_chain,
#: __builtin_eh_return...), frame and return addresses, cycle counters, and libc calls in builtin form.
ALLOWED_BUILTINS = frozenset(
    """
    expect expect_with_probability prefetch assume_aligned unreachable trap constant_p
    memcpy memmove memset memcmp alloca alloca_with_align
    fma fmaf fmal sqrt sqrtf sqrtl fabs fabsf fabsl fmin fmax fminf fmaxf floor floorf ceil ceilf
    trunc truncf round roundf rint copysign copysignf inf inff infl huge_val huge_valf nan nanf
    isnan isinf isfinite isnormal signbit isgreater isless isgreaterequal islessequal isunordered
    ctz ctzl ctzll clz clzl clzll popcount popcountl popcountll parity parityl parityll ffs ffsl ffsll
    clrsb clrsbl clrsbll bswap16 bswap32 bswap64
    add_overflow sub_overflow mul_overflow add_overflow_p sub_overflow_p mul_overflow_p
    shuffle shufflevector convertvector offsetof types_compatible_p choose_expr complex
    va_start va_end va_arg va_copy va_list
    exp expf exp2 exp2f expm1 log logf log2 log2f log10 log1p pow powf cbrt hypot fmod remainder
    sin sinf cos cosf tan atan atan2 tanh sinh cosh nearbyint lround lroundf llround lrint llrint
    abs labs llabs
""".split()  # the libm ones compile to calls of functions the object check allows anyway
)
#: `__builtin_ia32_*` builtins and their intrinsic spellings that read clocks, randomness or machine
#: state, or change control flow; the object check refuses the instructions themselves too.
_DENIED_IA32 = re.compile(
    r"rdtsc|rdpmc|rdpid|rdpru|umonitor|umwait|rdrand|rdseed|rd[fg]sbase|wr[fg]sbase|rdpkru|wrpkru|xbegin|xend|xabort|xtest"
    r"|xgetbv|xsetbv|xsave|xrstor|fxsave|fxrstor|monitor|mwait|tpause|senduipi|clui|stui|testui"
    r"|incssp|rdssp|saveprevssp|rstorssp|wrss|wruss|setssbsy|clrssbsy|ptwrite|enqcmd|serialize|cpuid"
    r"|wbinvd|wbnoinvd|invpcid|hreset|loadiwkey|encodekey|aesenc\d*kl|aesdec\d*kl"
)
#: Intrinsic functions (immintrin.h spellings) that wrap the instructions above.
_DENIED_INTRINSIC = re.compile(r"^_{1,2}(?:mm_)?(?:" + _DENIED_IA32.pattern + r")\w*$")
#: Names that only the compiler may generate: libgomp's and other OpenMP runtimes' entry points
#: (GOMP_parallel takes a function pointer and data: calling it by hand runs anything).
_RUNTIME_INTERNAL = re.compile(r"^(GOMP_|__kmpc_|__kmp_|__builtin_GOMP_|__builtin_omp_|gomp_|_gomp_)")

#: OpenMP: the permitted directives and clauses, every word of a `#pragma omp` line outside
#: parentheses (docs/static_checks.md lists them with the reasons). The rule: a construct is
#: permitted when it runs only inside the call, on the threads of the call's own team, and
#: compiles (gcc 12) to nothing but data-only runtime entry points the object check allows
#: (ALLOWED_UNDEFINED). Each addition below was decided by compiling real examples with gcc 12
#: and the candidate flags, and reading the object's symbols (tests/test_static_check.py):
#: - `scan` (`inclusive`, `exclusive`; `inscan` is a reduction modifier): a scan loop, GOMP_loop_start
#:   plus malloc/free for the per-thread partials;
#: - `master`, `masked` (`filter`): a thread-number test, no runtime call of their own;
#: - `ordered` (`threads`, `simd`, and `depend(sink:/source)` doacross loops): GOMP_ordered_*,
#:   GOMP_loop_ordered_*, GOMP_loop_doacross_*, GOMP_doacross_*; at worst a deadlock, which the
#:   wall-clock limit ends;
#: - `taskloop` (`grainsize`, `num_tasks`, `nogroup`, `priority`), `taskgroup` (`task_reduction`),
#:   `in_reduction`, `depend` on tasks and `taskyield`: GOMP_taskloop*, GOMP_taskgroup_*,
#:   GOMP_task_reduction_remap, GOMP_taskwait_depend, GOMP_taskyield; tasks finish inside the
#:   call (at the region's barrier, or at once when there is no team);
#: - `declare simd` (`uniform`, `linear`, `aligned`, `simdlen`, `inbranch`, `notinbranch`): vector
#:   clones `_ZGV<isa><mask><len><args>_<name>`, ordinary global functions that the object check
#:   treats like any helper and the build localizes (build.localize_argv); `declare reduction`
#:   (`initializer`): a user-defined combiner, inlined code of the candidate's own lines;
#: - `flush`: a memory fence (mfence), no call; `scope`: a region with private/reduction
#:   clauses (GOMP_scope_start with a task reduction); `loop` (`bind`, `order`): a loop the
#:   compiler schedules like `for`/`simd`, its team queries harmless outside `teams`;
#: - `threadprivate` (`copyin`): gcc makes the variable thread-local storage (.tbss/.tdata,
#:   %fs-relative), the same as C11 `_Thread_local`, which is permitted already.
#: Refused (not in these sets): `target*`, `teams`, `distribute`, `declare target`/`variant`/
#: `mapper`, `requires`, `device`, `map` (offloading, or teams outside the call's team);
#: `cancel`, `cancellation point` (abandon work; GOMP_cancel); `error` (prints at run time;
#: GOMP_error/GOMP_warning); `proc_bind`, `affinity`, `num_teams`, `thread_limit` (thread
#: placement and limits are the harness's); `allocate`/`allocators` (runtime allocators with
#: traits, GOMP_alloc); `detach` (events fulfilled outside the task); `depobj`, `interop`.
#: `section` and `taskwait` come with `sections` and `task`.
OPENMP_DIRECTIVES = frozenset(
    """
    parallel for simd sections section single task taskwait atomic critical barrier
    scan master masked ordered taskloop taskgroup taskyield flush scope loop threadprivate declare
""".split()
)
OPENMP_CLAUSES = frozenset(
    """
    reduction collapse schedule private firstprivate lastprivate shared default nowait num_threads if
    aligned linear safelen simdlen nontemporal copyprivate untied final mergeable
    read write update capture compare seq_cst relaxed acquire release acq_rel hint
    inclusive exclusive filter threads depend grainsize num_tasks nogroup priority task_reduction
    in_reduction uniform inbranch notinbranch initializer order bind copyin
""".split()
)

#: Non-OpenMP pragmas a kernel may use: optimization hints only (not weak, redefine_extname, visibility...).
#: Besides GCC's own hints: other compilers' loop hints, which gcc ignores (LLM answers often
#: carry them). Pragmas gcc acts on that rename, weaken or hide symbols stay refused.
_ALLOWED_PRAGMA = re.compile(
    r"^(GCC\s+(unroll|ivdep|optimize|push_options|pop_options|target|diagnostic)\b|once\b|pack\b|STDC\b"
    r"|(unroll|nounroll|ivdep|vector|novector|loop_count)\b|clang\s+loop\b)"
)

_ASM = re.compile(r"\b(asm|__asm|__asm__)\b")
_ATTRIBUTE = re.compile(r"__attribute(?:__)?\s*\(\s*\((.*?)\)\s*\)|\[\[(.*?)\]\]", re.S)
#: Attributes that run code outside the call, or rename/relocate symbols.
_FORBIDDEN_ATTRIBUTES = {
    "constructor",
    "destructor",
    "ifunc",
    "section",
    "alias",
    "weakref",
    "weak",
    "naked",
    "visibility",
    "target_clones",
    "symver",
}
_IDENT = re.compile(r"([A-Za-z_]\w*)(\s*\()?")
# `%:` is the digraph spelling of `#`.
_INCLUDE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*(include|include_next|import)\b[ \t]*(.*)$", re.M)
_DIRECTIVE_OTHER = re.compile(r"^[ \t]*(?:#|%:)[ \t]*(embed\b|line\b|\d)", re.M)

#: Undefined symbols a candidate object may reference: memory, string, libm, OpenMP runtime.
ALLOWED_UNDEFINED = frozenset(
    """
    malloc calloc realloc free aligned_alloc posix_memalign memalign
    memcpy memmove memset memcmp __memcpy_chk __memset_chk __memmove_chk
    sqrt sqrtf cbrt fabs fabsf fma fmaf fmin fmax fminf fmaxf floor ceil round trunc lround llround
    rint nearbyint exp exp2 expm1 log log2 log10 log1p pow powf hypot sin cos tan asin acos atan atan2
    sinh cosh tanh erf erfc fmod remainder copysign nan ldexp frexp modf ilogb logb
    abs labs llabs
    omp_get_thread_num omp_get_num_threads omp_get_max_threads omp_get_num_procs omp_in_parallel
    omp_get_level omp_get_team_size omp_get_ancestor_thread_num omp_get_team_num omp_get_num_teams
    omp_init_lock omp_destroy_lock omp_set_lock omp_unset_lock
    __stack_chk_fail _GLOBAL_OFFSET_TABLE_
""".split()
) | frozenset(  # libgomp entry points that gcc 12 emits for OPENMP_DIRECTIVES and OPENMP_CLAUSES
    # Those that take a function pointer (GOMP_parallel*, GOMP_task, GOMP_taskloop*) are only ever
    # called by compiler-generated code: naming any GOMP_ symbol in the source is refused.
    """
    GOMP_parallel GOMP_barrier GOMP_critical_start GOMP_critical_end GOMP_critical_name_start
    GOMP_critical_name_end GOMP_atomic_start GOMP_atomic_end GOMP_single_start GOMP_single_copy_start
    GOMP_single_copy_end GOMP_sections_start GOMP_sections_next GOMP_sections_end GOMP_sections_end_nowait
    GOMP_parallel_sections GOMP_task GOMP_taskwait GOMP_loop_end GOMP_loop_end_nowait
    GOMP_loop_start GOMP_loop_ull_start GOMP_parallel_reductions GOMP_sections2_start GOMP_scope_start
    GOMP_workshare_task_reduction_unregister
    GOMP_ordered_start GOMP_ordered_end GOMP_loop_ordered_start GOMP_loop_ull_ordered_start
    GOMP_loop_doacross_start GOMP_loop_ull_doacross_start
    GOMP_doacross_post GOMP_doacross_wait GOMP_doacross_ull_post GOMP_doacross_ull_wait
    GOMP_taskloop GOMP_taskloop_ull GOMP_taskgroup_start GOMP_taskgroup_end GOMP_taskgroup_reduction_register
    GOMP_taskgroup_reduction_unregister GOMP_task_reduction_remap GOMP_taskwait_depend GOMP_taskyield
""".split()
    + [  # ordered and doacross loops, per schedule
        f"GOMP_loop_{ull}{what}_{kind}_{step}"
        for ull in ("", "ull_")
        for what in ("ordered", "doacross")
        for kind in ("static", "dynamic", "guided", "runtime")
        for step in ("start", "next")
        if not (what == "doacross" and step == "next")
    ]
    + [
        f"GOMP_{par}loop_{ull}{kind}_{step}"
        for par in ("", "parallel_")
        for ull in ("", "ull_")
        for kind in (
            "static",
            "dynamic",
            "guided",
            "runtime",
            "nonmonotonic_dynamic",
            "nonmonotonic_guided",
            "nonmonotonic_runtime",
            "maybe_nonmonotonic_runtime",
        )
        for step in ("start", "next")
        if not (par and ull)
    ]
)
_ALLOWED_UNDEFINED_PREFIXES = (
    "__sqrt",
    "__fma",
    "__exp",
    "__log",
    "__pow",
    "__powidf2",
    "__powisf2",
    "__muldc3",
    "__mulsc3",
    "__divdc3",
    "__divsc3",
    "_ZGV",
)

#: Sections a compiled C kernel legitimately has.
_ALLOWED_SECTION = re.compile(
    r"^(\.text(\..*)?|\.data(\..*)?|\.bss(\..*)?|\.rodata(\..*)?|\.rela?\..*|\.comment|\.note\..*"
    r"|\.eh_frame|\.symtab|\.strtab|\.shstrtab|\.group|\.debug_.*|\.tbss|\.tdata|\.llvm_addrsig|)$"
)
_FORBIDDEN_INSN = re.compile(
    r"\b(syscall|sysenter|sysexit|int\s+\$0x80|int\s+\$|ljmp|lcall|vmcall|iret\w*)\b"
    r"|\b(call|jmp)[a-z]*\s+\*|\bnotrack\s+jmp|\bbnd\s+jmp\s+\*"
    r"|^\s*(" + _DENIED_IA32.pattern + r")\w*\b"
)


#: Instructions above a forced tier, as objdump writes them (AT&T): for avx2, AVX-512's registers
#: (zmm, the mask registers, xmm/ymm 16-31) and its EVEX-only instructions on narrower vectors;
#: for sse4, any VEX or EVEX instruction (their mnemonics start with v) and any ymm or zmm
#: register. The tier's -march level keeps the compiler from emitting them, and the target
#: check keeps a kernel from asking for them; this finds what came in another way.
_EVEX_ONLY = (
    r"vpternlog|vperm[ti]2|vpro[lr]|vpmullq|vcvtt?[ps][ds]2u?qq|vcvtu|vrange|vreduce|vgetexp|vgetmant"
    r"|vscalef|vfixupimm|vrndscale|vrcp14|vrsqrt14|v?p?compress|v?p?expand|valign[dq]|vpmovm2|vpmov[dqw]2m"
    r"|vpmovu?s?[qdw][bdw]\b|vpabsq|vp(max|min)[su]q|vpsraq|vp?scatter|vpconflict|vplzcnt|vpopcnt[dq]|vpshl?d|vpshrd"
    r"|v(insert|extract)[fi](32x8|64x2|64x4|32x4)|vbroadcast[fi](32x[248]|64x[24])|vpbroadcastm|kmov|kand|kor|kxor|knot|kshift|kunpck|ktest|kortest"
)
_ABOVE_TIER = {
    "avx2": re.compile(r"%zmm|%[xy]mm(1[6-9]|2\d|3[01])\b|%k[0-7]\b|\{%k|^\s*(" + _EVEX_ONLY + r")"),
    "sse4": re.compile(r"%[yz]mm|%k[0-7]\b|^\s*v[a-z]"),
}


@dataclass(frozen=True)
class Violation:
    status: str
    detail: str


def _forbidden(detail: str) -> Violation:
    return Violation("forbidden", detail)


def splice_lines(source: str) -> str:
    """Join backslash-newline continuations, as the preprocessor's first phase does."""
    return re.sub(r"\\[ \t\f\v]*\n", "", source.replace("\r\n", "\n").replace("\r", "\n"))


def strip_comments(source: str, keep_strings: bool = False) -> str:
    """Blank out comments and the contents of string/char literals of spliced source
    (`keep_strings=True`: comments only, literals kept as written).

    The result has the same length as `source` and keeps every newline, so offsets
    found in it point at the same text in `source`.
    """
    out, i, n = [], 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i) or source.startswith("/*", i):
            if c == "/" and source[i + 1] == "/":
                j = source.find("\n", i)
                j = n if j < 0 else j
            else:
                j = source.find("*/", i + 2)
                j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in source[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            j = min(j, n - 1)
            out.append(source[i : j + 1] if keep_strings else c + " " * (j - i - 1) + (source[j] if j > i else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


_OPENMP_NAME = re.compile(r"^(omp_|GOMP_|__kmpc_)")


def _headers(problem: Problem, openmp: bool) -> tuple[str, ...]:
    """The headers a candidate may include: the problem's, where immintrin.h stands for the
    architecture's headers of vector intrinsics (x86: immintrin.h and its parts such as
    emmintrin.h; aarch64: arm_neon.h; lab.harness.target), and serial mode drops omp.h."""
    allowed = list(problem.allowed_headers)
    if "immintrin.h" in allowed:
        at = allowed.index("immintrin.h")
        allowed[at : at + 1] = target.intrinsic_headers()
    return tuple(h for h in allowed if openmp or h != "omp.h")


_DEFINITION_TOKEN = re.compile(r"([A-Za-z_]\w*)\s*\(|([A-Za-z_]\w*)|([(){};])")
_OPENS_BODY = re.compile(r"\s*\{")


def _defined_functions(code: str) -> dict[str, bool]:
    """{name: whether declared `static`} of the functions `code` (comment-free) defines: a name,
    its parenthesized parameters (no `;`, `{` or `}` inside), then `{`. One pass over the text
    (a regex that backtracks would take seconds on a long line of `f(f(f(...`)."""
    defined: dict[str, bool] = {}
    opened: list[tuple[str | None, bool]] = []  # per open parenthesis: the name before it, `static` seen
    static = False  # `static` in the current declaration
    for m in _DEFINITION_TOKEN.finditer(code):
        name, word, mark = m.groups()
        if name is not None or mark == "(":
            opened.append((name, static))
        elif word is not None:
            static = static or (word == "static" and not opened)
        elif mark == ")":
            if opened:
                before, was_static = opened.pop()
                if before is not None and _OPENS_BODY.match(code, m.end()):
                    defined[before] = defined.get(before, False) or was_static
        else:  # ; { }: a new declaration starts
            opened.clear()
            static = False
    return defined


_OMP_PRAGMA_LINE = re.compile(r"^[ \t]*(?:#|%:)[ \t]*pragma[ \t]+omp\b[^\n]*", re.M)


def _omp_names_blanked(code: str) -> str:
    """`code` (same length) with the directive and clause names of its `#pragma omp` lines, outside
    parentheses, blanked: `loop bind(parallel)` names a clause, not the socket call `bind`. What
    the parentheses hold (`if(...)`, `num_threads(...)`) is still read as code."""

    def blank(line: re.Match) -> str:
        out, depth = [], 0
        for tok in re.finditer(r"[A-Za-z_]\w*|[^A-Za-z_]", line.group(0)):
            word = tok.group(0)
            depth += word == "("
            depth -= word == ")" and depth > 0
            known = depth == 0 and (word in OPENMP_DIRECTIVES or word in OPENMP_CLAUSES)
            out.append(" " * len(word) if known else word)
        return "".join(out)

    return _OMP_PRAGMA_LINE.sub(blank, code)


def _identifier_violation(code: str, problem: Problem, openmp: bool = True) -> Violation | None:
    code = _omp_names_blanked(code)
    if _ASM.search(code):
        return _forbidden("uses inline assembly")
    for gnu, c2x in _ATTRIBUTE.findall(code):
        for name in re.findall(r"[A-Za-z_]\w*", gnu or c2x):
            if name.strip("_") in _FORBIDDEN_ATTRIBUTES:
                return _forbidden(f"uses __attribute__(({name})), which runs code outside the call or renames symbols")
    defined = _defined_functions(code)
    own = set(defined)
    # Its own `static` functions: a helper named `times` or `read` is called, not libc's (a non-static
    # one would interpose libc's, which the object check refuses; calls it misses show up there).
    own_static = {name for name, static in defined.items() if static} - _RUNNER_NAMES
    for name, paren in _IDENT.findall(code):
        if (_BLAS.match(name) or name.startswith("cblas")) and name not in own:
            return _forbidden(f"calls BLAS ({name})")
        if _RUNTIME_INTERNAL.match(name):
            return _forbidden(f"names {name}, an OpenMP runtime entry point only the compiler may call")
        if not openmp and _OPENMP_NAME.match(name):
            return _forbidden(f"uses {name}: OpenMP is not allowed in serial mode")
        builtin = _builtin_violation(name)
        if builtin:
            return builtin
        # Only calls and declarations (name followed by '('): a variable named `time` is fine,
        # and any other use of such a function still shows up in the object's symbols.
        if paren and name in FORBIDDEN_CALLS and name != problem.function and name not in own_static:
            return _forbidden(f"uses {name}, which reaches outside the computation")
    return None


def _builtin_violation(name: str) -> Violation | None:
    if name.startswith("__builtin_"):
        rest = name[len("__builtin_") :]
        if rest.startswith("ia32_"):
            if _DENIED_IA32.match(rest[len("ia32_") :]):
                return _forbidden(f"uses {name}, which reads clocks, randomness or machine state")
        elif rest not in ALLOWED_BUILTINS:
            return _forbidden(f"uses {name}, a compiler builtin outside the allow-list")
    elif name.startswith("_") and _DENIED_INTRINSIC.match(name):
        return _forbidden(f"uses {name}, which reads clocks, randomness or machine state")
    return None


def _paren_free(text: str) -> str:
    """`text` with every parenthesized group (nested too) removed: a pragma's clause arguments."""
    out, depth = [], 0
    for ch in text:
        depth += ch == "("
        if depth == 0:
            out.append(ch)
        depth -= ch == ")" and depth > 0
    return "".join(out)


_TARGET_OPTION = re.compile(r"\btarget\s*\(((?:\s*\"[^\"]*\"\s*,?)*)\)")


def _target_above_tier(text: str) -> Violation | None:
    """A `target("...")` (a pragma's or an attribute's) that names instructions above the tier
    this process works at (lab.harness.target): it would bring back, for one function, what the
    tier's compiler flags leave out."""
    for m in _TARGET_OPTION.finditer(text):
        above = target.refused_features(",".join(re.findall(r'"([^"]*)"', m.group(1))))
        if above:
            return _forbidden(
                f"targets {', '.join(above[:3])}, above the {target.current()} tier this kernel is built for"
            )
    return None


def pragma_violation(pragma: str, openmp: bool = True) -> Violation | None:
    """The rule for one `#pragma` line's text (after `#pragma`), as gcc -E writes it (without
    comments). `openmp=False` is the serial execution model: no OpenMP construct at all."""
    text = pragma.strip()
    if re.match(r"omp\b", text):
        if not openmp:
            return _forbidden(f"uses '#pragma {text[:40]}': OpenMP is not allowed in serial mode")
        words = re.findall(r"[A-Za-z_]\w*", _paren_free(text[3:]).replace(",", " "))
        for word in words:
            if word not in OPENMP_DIRECTIVES and word not in OPENMP_CLAUSES:
                return _forbidden(
                    f"uses '#pragma omp ... {word}', outside the permitted OpenMP constructs "
                    f"({', '.join(sorted(OPENMP_DIRECTIVES))})"
                )
        # `declare` opens only `declare simd` and `declare reduction` (not target, variant, mapper).
        declare = words[:1] == ["declare"] and words[1:2] not in (["simd"], ["reduction"])
        if not words or words[0] not in OPENMP_DIRECTIVES or declare or "declare" in words[1:]:
            return _forbidden(f"'#pragma {text[:60]}' is not a permitted OpenMP directive")
        return None
    if not _ALLOWED_PRAGMA.match(text):
        return _forbidden(f"'#pragma {text[:60]}' is not allowed (only OpenMP and GCC optimization hints)")
    return _target_above_tier(text)


def _pragma_lines_violation(own: str, openmp: bool) -> Violation | None:
    for m in re.finditer(r"^[ \t]*#[ \t]*pragma\b(.*)$", own, re.M):
        violation = pragma_violation(m.group(1), openmp)
        if violation:
            return violation
    return None


_HEADER_NAME = re.compile(r'<[^>\n]*>|"[^"\n]*"')


def _include_target(spliced: str, code: str, start: int, end: int) -> str:
    """The target of the include directive whose rest of line is spliced[start:end], as the
    preprocessor reads it: a header name (`<...>` or `"..."`) taken from the text as written
    (`code`, the comment-free copy, blanks the inside of `"..."`, and a `//` or `/*` inside
    `<...>` is part of the name, not a comment), the comments around it dropped. Anything else
    (a computed include, trailing tokens) is returned without its comments."""
    first = start + len(code[start:end]) - len(code[start:end].lstrip())
    name = _HEADER_NAME.match(spliced, first, end)
    if name and not code[name.end() : end].strip():
        return name.group(0)
    return strip_comments(spliced[start:end], keep_strings=True).strip()


def check_source(source: str, problem: Problem, openmp: bool = True) -> Violation | None:
    """Text-level checks of the candidate source as written (`openmp=False`: serial mode)."""
    spliced = splice_lines(source)
    code = strip_comments(spliced)
    for m in _INCLUDE.finditer(code):
        kind, included = m.group(1), _include_target(spliced, code, m.start(2), m.end(2))
        header = re.fullmatch(r"<\s*([\w./+-]+)\s*>", included)
        if kind != "include" or not header:
            return _forbidden(f"#{kind} {included} is not an allowed include")
        if header.group(1) not in _headers(problem, openmp):
            if header.group(1) == "omp.h":
                return _forbidden("includes <omp.h>: OpenMP is not allowed in serial mode")
            # As the prompt names them (immintrin.h for its parts too).
            allowed = ", ".join(h for h in problem.allowed_headers if openmp or h != "omp.h")
            return _forbidden(f"includes <{header.group(1)}>, which is not allowed (allowed: {allowed})")
    m = _DIRECTIVE_OTHER.search(code)
    if m:
        # #line and line markers would make the preprocessed check lose track of the candidate's lines.
        return _forbidden(f"the directive #{m.group(1)} is not allowed")
    return _identifier_violation(code, problem, openmp)


_BUILTIN_FILES = ("<built-in>", "<command-line>")


def candidate_lines(preprocessed: str | Iterable[str], filename: str) -> tuple[str, list[str]]:
    """Split `gcc -E` output (text or lines): (text of the candidate file's own lines, headers it
    included directly).

    A line marker that switches file without the enter/return flags comes from a
    #line directive; whatever follows it is counted as the candidate's own code.
    Raises OverflowError once the own lines pass MAX_OWN_EXPANDED_BYTES.
    """
    lines = preprocessed.splitlines() if isinstance(preprocessed, str) else preprocessed
    own, headers, current, in_candidate, size = [], [], None, False, 0
    for line in lines:
        if line.startswith("# "):
            m = re.match(r'^# (\d+) "([^"]*)"((?: \d)*)', line)
            if m:
                name, flags = m.group(2), m.group(3).split()
                if "1" in flags and in_candidate:  # entering a header straight from the candidate
                    headers.append(name)
                relined = not flags and name not in (filename, *_BUILTIN_FILES)
                in_candidate = name == filename or relined or (in_candidate and name == current and not flags)
                current = name
                continue
        if in_candidate:
            size += len(line) + 1
            if size > MAX_OWN_EXPANDED_BYTES:
                raise OverflowError(f"the code expands to more than {MAX_OWN_EXPANDED_BYTES // 1024} KiB after macros")
            own.append(line.rstrip("\n"))
    return "\n".join(own), headers


#: The compiler of the candidates (build.BuildConfig), whose include directories are the system ones.
DEFAULT_CC = BuildConfig.cc  # the field's default: no tier is read at import


def _normalized(path: str) -> set[str]:
    """`path` spelt out (dots and double slashes resolved) and with its symbolic links resolved."""
    return {os.path.normpath(path), os.path.realpath(path)}


@functools.cache
def compiler_include_dirs(cc: str = DEFAULT_CC) -> frozenset[str]:
    """The directories `cc` searches for `#include <...>` (its `-v` list), each both as spelt
    and with its symbolic links resolved: the system headers of that toolchain, wherever it is
    installed (/usr, /opt, a conda environment's prefix...). Asked once per compiler.
    Raises RuntimeError when the compiler gives no such list (a broken toolchain is the host's
    fault: the evaluation reports harness_error, never a `forbidden` candidate)."""
    proc = subprocess.run(
        [cc, "-xc", "-E", "-v", "-"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "LC_ALL": "C"},  # the English markers below
    )
    lines = proc.stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("#include <...> search starts here:")), None)
    end = next((i for i, line in enumerate(lines) if line.startswith("End of search list.")), None)
    dirs = [line.strip() for line in lines[start + 1 : end]] if start is not None and end is not None else []
    dirs = [d for d in dirs if os.path.isabs(d)]
    if proc.returncode != 0 or not dirs:
        raise RuntimeError(f"{cc} -xc -E -v - listed no include directories (status {proc.returncode})")
    return frozenset(n for d in dirs for n in _normalized(d))


def _system_header(header: str, cc: str) -> bool:
    """Whether `header` (a path from a line marker) lies directly in one of `cc`'s include
    directories, where `#include <name>` finds it. A relative path (a file of the work
    directory) never does."""
    dirs = compiler_include_dirs(cc)
    return os.path.isabs(header) and any(os.path.dirname(n) in dirs for n in _normalized(header))


def check_preprocessed(
    preprocessed: str | Iterable[str], filename: str, problem: Problem, openmp: bool = True, cc: str = DEFAULT_CC
) -> Violation | None:
    """Checks on the candidate's own lines after macro expansion (`openmp=False`: serial mode);
    `cc` is the compiler that preprocessed them (its include directories hold the system headers)."""
    try:
        own, headers = candidate_lines(preprocessed, filename)
    except OverflowError as err:
        return Violation("compile_error", str(err))
    for header in headers:
        name = Path(header).name
        if name not in _headers(problem, openmp) or not _system_header(header, cc):
            return _forbidden(
                f"includes {header}, which is not an allowed header" + (" in serial mode" * (name == "omp.h"))
            )
    return (
        _pragma_lines_violation(own, openmp)
        # Attributes' target strings (gcc -E has removed the comments and kept the strings,
        # which strip_comments blanks). Pragma lines match too: pragma_violation checks them as
        # well, for its callers that see a pragma alone.
        or _target_above_tier(own)
        or _identifier_violation(strip_comments(own), problem, openmp)
    )


def check_preprocessed_file(
    path: Path, filename: str, problem: Problem, openmp: bool = True, cc: str = DEFAULT_CC
) -> Violation | None:
    """check_preprocessed on a file of gcc -E output, streamed: the parent never holds more than
    the candidate's own lines (at most MAX_OWN_EXPANDED_BYTES)."""
    if path.stat().st_size >= MAX_PREPROCESSED_BYTES:
        return Violation("compile_error", f"the preprocessed source exceeds {MAX_PREPROCESSED_BYTES >> 20} MiB")
    with open(path, errors="replace") as lines:
        return check_preprocessed(lines, filename, problem, openmp, cc)


_CODE_SECTIONS = {".text", ".text.unlikely", ".text.hot", ".text.startup", ".text.exit"}
#: The runner's own names (harness/bench.h, crt files) that a candidate definition would clash with.
_RUNNER_NAMES = frozenset(
    "main _start _init _fini __libc_csu_init __libc_csu_fini __libc_start_main __dso_handle data_start "
    "__data_start _edata _end __bss_start _IO_stdin_used __TMC_END__ _DYNAMIC _GLOBAL_OFFSET_TABLE_".split()
)


class ToolError(RuntimeError):
    """A binutils call on a candidate object failed or ran past its limits."""


def _limit_tool() -> None:  # runs in the child before exec
    mb = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (TOOL_MEMORY_MB * mb, TOOL_MEMORY_MB * mb))
    resource.setrlimit(resource.RLIMIT_CPU, (int(TOOL_TIMEOUT_S), int(TOOL_TIMEOUT_S)))
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 * mb, 256 * mb))


def _tool_lines(*argv: str) -> Iterator[str]:
    """The output lines of one tool call, streamed from a file (never all in memory), under
    TOOL_TIMEOUT_S and TOOL_MEMORY_MB."""
    with tempfile.TemporaryFile("w+", errors="replace") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, preexec_fn=_limit_tool)  # noqa: PLW1509
        # A timer thread and a blocking wait, not Popen.wait(timeout=): that one polls with
        # sleeps of up to 50 ms, which cost ~35 ms per candidate for tools that take ~5 ms.
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(TOOL_TIMEOUT_S, kill)
        timer.start()
        try:
            returncode = proc.wait()
        finally:
            timer.cancel()
            timer.join()
        if expired.is_set():
            raise ToolError(f"{argv[0]} ran past {TOOL_TIMEOUT_S:g} s")
        if returncode != 0:
            raise ToolError(f"{argv[0]} failed on the object (status {returncode})")
        out.seek(0)
        yield from out


@functools.cache
def interposable_names(cc: str = "gcc") -> frozenset[str]:
    """Every symbol libc, libm and libgomp export, plus the runner's own names: a candidate
    definition of one of these is `forbidden` (it would interpose, had it not been localized)."""
    names = set(_RUNNER_NAMES)
    for lib in ("libc.so.6", "libm.so.6", "libgomp.so.1"):
        path = subprocess.run([cc, f"-print-file-name={lib}"], capture_output=True, text=True, check=True).stdout
        for line in _tool_lines("nm", "-D", "--defined-only", path.strip()):
            parts = line.split()
            if len(parts) >= 3:
                names.add(parts[2].split("@")[0])
    return frozenset(names)


#: What explicit SIMD code compiles to, once the compiler may not vectorize on its own: packed
#: floating-point arithmetic (any width, FMA included), packed integer arithmetic (a prefix sum
#: on int64 lanes), or lane shuffles on 256- or 512-bit registers (a transpose that only moves
#: data). Not logic (xorpd/andpd negate and take absolute values in scalar code, pxor zeroes a
#: register), not moves or broadcasts (memcpy and memset use wide registers too), and not
#: shuffles on 128-bit registers (scalar conversions use unpcklpd).
_PACKED_ARITHMETIC = re.compile(
    r"^\s*v?(?:fn?m(?:add|sub)\w*p[sd]|(?:mul|add|sub|div|min|max|sqrt|hadd|hsub|addsub|dp)p[sd]"
    r"|p(?:add|sub)[bwdq]|p(?:add|sub)u?s[bw]|pmul(?:l[dwq]|h\w*|u?dq))\b"
)
_WIDE_SHUFFLE = re.compile(
    r"^\s*v(?:perm|shuf|unpck|punpck|insert|extract|blend|pblend|pshuf|alignr|palignr|align[dq])\w*\s.*%[yz]mm"
)
#: The OpenMP runtime calls that start threads: a parallel region, loop, sections or teams.
#: Other runtime calls (omp_get_wtime, omp_get_num_threads on their own) run nothing in parallel.
_PARALLEL_REGION = re.compile(r"^GOMP_(?:parallel|teams)")


def object_facts(obj: Path, novec_obj: Path | None = None) -> dict[str, bool | None]:
    """What a compiled candidate shows of its techniques, whatever its source text says:
    `openmp`, whether it starts threads (calls the runtime's parallel-region entry points,
    GOMP_parallel* or GOMP_teams*: an `if(0)` or `num_threads(1)` clause still counts, which no
    object can tell); `simd`, whether its build without auto-vectorization (`novec_obj`,
    build.NO_AUTOVECTORIZE) still holds packed arithmetic or wide-register shuffles (None when
    that build was not made)."""
    undefined = set()
    for line in _tool_lines("readelf", "-sW", str(obj)):
        parts = line.split()
        if len(parts) >= 8 and parts[0].endswith(":") and parts[6] == "UND":
            undefined.add(parts[7])
    facts: dict[str, bool | None] = {"openmp": any(_PARALLEL_REGION.match(n) for n in undefined), "simd": None}
    if novec_obj is not None:
        facts["simd"] = any(
            _PACKED_ARITHMETIC.match(ins) or _WIDE_SHUFFLE.match(ins)
            for ins in (
                line.partition("\t")[2]
                for line in _tool_lines("objdump", "-d", "--no-show-raw-insn", "-M", "att", str(novec_obj))
            )
        )
    return facts


def check_object(obj: Path, problem: Problem, openmp: bool = True) -> Violation | None:
    """Checks of the compiled candidate object (symbols, sections, instructions); `openmp=False`
    (serial mode) also refuses every reference to the OpenMP runtime."""
    try:
        return _check_object(obj, problem, openmp)
    except ToolError as err:
        return Violation("compile_error", f"the object could not be inspected: {err}")


def _check_object(obj: Path, problem: Problem, openmp: bool) -> Violation | None:
    # One readelf call gives the section table, then the symbol table. (readelf, not nm:
    # nm loads the LTO plugin on every call, ~15 ms per candidate for nothing.)
    sections: dict[str, str] = {}  # index -> name
    code_sections, code_bytes = set(), 0
    symbols: list[tuple[str, str, str, str]] = []  # (name, type, bind, section index)
    for line in _tool_lines("readelf", "-SsW", str(obj)):
        m = re.match(
            r"\s*\[\s*(\d+)\]\s+(\S*)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([A-Za-z]*)\s+\d+\s+\d+\s+\d+",
            line,
        )
        if m:
            index, name, size, flags = m.group(1), m.group(2), int(m.group(3), 16), m.group(4)
            sections[index] = name
            if not _ALLOWED_SECTION.match(name):
                return _forbidden(f"has section {name} (constructors, destructors and custom sections are not allowed)")
            if "X" in flags:
                if name not in _CODE_SECTIONS:
                    return _forbidden(f"has code in section {name}; only the compiler's text sections may hold code")
                code_sections.add(name)
                code_bytes += size
            continue
        # "Num: Value Size Type Bind Vis Ndx Name"
        parts = line.split()
        if len(parts) >= 8 and parts[0].endswith(":") and parts[0][:-1].isdigit():
            name, kind, bind, ndx = parts[7], parts[3], parts[4], parts[6]
            # Only functions may live in code sections: bytes placed there as data are never disassembled below.
            if kind == "OBJECT" and sections.get(ndx) in code_sections:
                return _forbidden(f"places data ({name}) in the code section {sections[ndx]}")
            if bind != "LOCAL":
                symbols.append((name, kind, bind, ndx))
    reserved = interposable_names()
    exported = False
    for name, kind, bind, ndx in symbols:
        if ndx == "UND":
            continue
        if kind == "IFUNC":
            return _forbidden(f"{name} is an ifunc, resolved by code that runs at load time")
        if name == problem.function:
            exported = exported or (kind == "FUNC" and bind == "GLOBAL" and sections.get(ndx) in code_sections)
        elif name in reserved:
            return _forbidden(
                f"defines {name}, a name of libc, libm, libgomp or the runner (rename it or make it static)"
            )
    if not exported:
        return Violation("format_error", f"{problem.function}() is not exported as a function (is it static?)")
    for name, _, _, ndx in symbols:
        if ndx != "UND":
            continue
        if _BLAS.match(name):
            return _forbidden(f"calls BLAS ({name})")
        if not openmp and _OPENMP_NAME.match(name):
            return _forbidden(f"references {name}: OpenMP is not allowed in serial mode")
        if name not in ALLOWED_UNDEFINED and not name.startswith(_ALLOWED_UNDEFINED_PREFIXES):
            return _forbidden(f"references {name}, which is not on the allow-list of callable symbols")
    if code_bytes > MAX_CODE_BYTES:
        return Violation(
            "compile_error", f"the object holds {code_bytes >> 10} KiB of code (limit {MAX_CODE_BYTES >> 10} KiB)"
        )
    above_tier = _ABOVE_TIER.get(target.current()) if target.forced() else None
    for line in _tool_lines("objdump", "-d", "--no-show-raw-insn", "-M", "att", str(obj)):
        _, tab, insn = line.partition("\t")
        m = tab and _FORBIDDEN_INSN.search(insn.split("#")[0])
        if m:
            return _forbidden(
                f"contains the instruction '{m.group(0).strip()}' "
                "(system calls, indirect branches and machine-state instructions are not allowed)"
            )
        m = tab and above_tier and above_tier.search(insn.split("#")[0])
        if m:
            return _forbidden(
                f"contains '{insn.strip()[:60]}', above the {target.current()} tier this kernel is built for"
            )
    return None
