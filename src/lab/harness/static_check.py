"""Static checks of candidate code: the first layer of defence, before anything runs.

Three passes, each returning a `Violation` (always status `forbidden`) or None:

- `check_source(source, problem)`: the text as written: includes outside the
  problem's allow-list (computed includes too), inline assembly, and
  identifiers of calls that reach outside the computation or into BLAS;
- `check_preprocessed(text, problem)`: the same identifier rules applied to
  the candidate's own lines after macro expansion (token pasting cannot hide a
  name from this pass), plus the list of headers that were really included;
- `check_object(path, problem)`: the compiled object, the ground truth: it may
  export only the required function, reference only allow-listed undefined
  symbols, hold no constructors/destructors or unusual sections, and contain no
  system-call or indirect-branch instructions (candidates are compiled with
  -fno-jump-tables, so a legitimate kernel has none).

These checks cannot see everything (a crafted memory-corruption exploit is out of
their reach); the sandbox contains what they miss, and the parent cross-checks the
driver's report (see lab/evaluate.py).

    >>> from lab.harness.problems import load_problem
    >>> check_source('#include <stdio.h>\\nvoid dgemm(){}', load_problem("dgemm")).detail
    'includes <stdio.h>, which is not allowed (allowed: stddef.h, stdint.h, stdlib.h, string.h, math.h, omp.h, immintrin.h, stdbool.h, float.h, limits.h)'
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

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

_ASM = re.compile(r"\b(asm|__asm|__asm__)\b")
_ATTRIBUTE = re.compile(r"__attribute(?:__)?\s*\(\s*\((.*?)\)\s*\)", re.S)
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
    omp_get_level omp_get_team_size omp_get_ancestor_thread_num
    omp_init_lock omp_destroy_lock omp_set_lock omp_unset_lock
    __stack_chk_fail _GLOBAL_OFFSET_TABLE_
""".split()
)
_ALLOWED_UNDEFINED_PREFIXES = (
    "GOMP_",
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
    r"|\.eh_frame|\.symtab|\.strtab|\.shstrtab|\.group|\.debug_.*|\.tbss|\.tdata|\.gnu\.lto_.*|\.llvm_addrsig|)$"
)
_FORBIDDEN_INSN = re.compile(
    r"\b(syscall|sysenter|sysexit|int\s+\$0x80|int\s+\$|ljmp|lcall|vmcall|iret\w*)\b"
    r"|\b(call|jmp)[a-z]*\s+\*|\bnotrack\s+jmp|\bbnd\s+jmp\s+\*"
)


@dataclass(frozen=True)
class Violation:
    status: str
    detail: str


def _forbidden(detail: str) -> Violation:
    return Violation("forbidden", detail)


def splice_lines(source: str) -> str:
    """Join backslash-newline continuations, as the preprocessor's first phase does."""
    return source.replace("\\\r\n", "").replace("\\\n", "")


def strip_comments(source: str) -> str:
    """Blank out comments and the contents of string/char literals of spliced source.

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
            out.append(c + " " * (j - i - 1) + (source[j] if j > i else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _identifier_violation(code: str, problem: Problem) -> Violation | None:
    if _ASM.search(code):
        return _forbidden("uses inline assembly")
    for attrs in _ATTRIBUTE.findall(code):
        for name in re.findall(r"[A-Za-z_]\w*", attrs):
            if name.strip("_") in _FORBIDDEN_ATTRIBUTES:
                return _forbidden(f"uses __attribute__(({name})), which runs code outside the call or renames symbols")
    for name, paren in _IDENT.findall(code):
        if _BLAS.match(name) or name.startswith("cblas"):
            return _forbidden(f"calls BLAS ({name})")
        # Only calls and declarations (name followed by '('): a variable named `time` is fine,
        # and any other use of such a function still shows up in the object's symbols.
        if paren and name in FORBIDDEN_CALLS and name != problem.function:
            return _forbidden(f"uses {name}, which reaches outside the computation")
    return None


def check_source(source: str, problem: Problem) -> Violation | None:
    """Text-level checks of the candidate source as written."""
    spliced = splice_lines(source)
    code = strip_comments(spliced)
    for m in _INCLUDE.finditer(code):
        kind, target = m.group(1), spliced[m.start(2) : m.end(2)].strip()  # the literal text, unblanked
        header = re.fullmatch(r"<\s*([\w./+-]+)\s*>", target)
        if kind != "include" or not header:
            return _forbidden(f"#{kind} {target} is not an allowed include")
        if header.group(1) not in problem.allowed_headers:
            allowed = ", ".join(problem.allowed_headers)
            return _forbidden(f"includes <{header.group(1)}>, which is not allowed (allowed: {allowed})")
    m = _DIRECTIVE_OTHER.search(code)
    if m:
        # #line and line markers would make the preprocessed check lose track of the candidate's lines.
        return _forbidden(f"the directive #{m.group(1)} is not allowed")
    return _identifier_violation(code, problem)


_BUILTIN_FILES = ("<built-in>", "<command-line>")


def candidate_lines(preprocessed: str, filename: str) -> tuple[str, list[str]]:
    """Split `gcc -E` output: (text of the candidate file's own lines, headers it included directly).

    A line marker that switches file without the enter/return flags comes from a
    #line directive; whatever follows it is counted as the candidate's own code.
    """
    own, headers, current, in_candidate = [], [], None, False
    for line in preprocessed.splitlines():
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
            own.append(line)
    return "\n".join(own), headers


def check_preprocessed(preprocessed: str, filename: str, problem: Problem) -> Violation | None:
    """Checks on the candidate's own lines after macro expansion."""
    own, headers = candidate_lines(preprocessed, filename)
    for header in headers:
        name = Path(header).name
        if name not in problem.allowed_headers or not header.startswith(("/usr/", "/opt/")):
            return _forbidden(f"includes {header}, which is not an allowed header")
    return _identifier_violation(strip_comments(own), problem)


_CODE_SECTIONS = {".text", ".text.unlikely", ".text.hot", ".text.startup", ".text.exit"}


def _section_name(obj: Path, index: int) -> str:
    for line in _tool("readelf", "-SW", str(obj)).splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
        if m and int(m.group(1)) == index:
            return m.group(2)
    return ""


def _tool(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout


def check_object(obj: Path, problem: Problem) -> Violation | None:
    """Checks of the compiled candidate object (symbols, sections, instructions)."""
    defined_global, undefined = [], []
    for line in _tool("nm", "-P", "--no-sort", str(obj)).splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U" or kind == "w" or kind == "v":
            undefined.append(name)
        elif kind.isupper() or kind in ("i", "u"):
            defined_global.append((name, kind))
    for name, kind in defined_global:
        if kind == "i":
            return _forbidden(f"{name} is an ifunc, resolved by code that runs at load time")
        if name != problem.function:
            return _forbidden(f"exports {name}; only {problem.function} may be exported (make helpers static)")
    if (problem.function, "T") not in defined_global:
        return Violation("format_error", f"{problem.function}() is not exported as a function (is it static?)")
    for name in undefined:
        if _BLAS.match(name):
            return _forbidden(f"calls BLAS ({name})")
        if name not in ALLOWED_UNDEFINED and not name.startswith(_ALLOWED_UNDEFINED_PREFIXES):
            return _forbidden(f"references {name}, which is not on the allow-list of callable symbols")
    code_sections = set()
    for line in _tool("objdump", "-h", "-w", str(obj)).splitlines():
        m = re.match(r"\s*\d+\s+(\S+)\s+[0-9a-f]{8}.*\s(\S+)$", line)
        if not m:
            continue
        name, flags = m.group(1), m.group(2)
        if not _ALLOWED_SECTION.match(name):
            return _forbidden(f"has section {name} (constructors, destructors and custom sections are not allowed)")
        if "CODE" in flags.split(","):
            if name not in _CODE_SECTIONS:
                return _forbidden(f"has code in section {name}; only the compiler's text sections may hold code")
            code_sections.add(name)
    # Only functions may live in code sections: bytes placed there as data are never disassembled below.
    for line in _tool("readelf", "-sW", str(obj)).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "OBJECT" and parts[6].isdigit():
            section = _section_name(obj, int(parts[6]))
            if section in code_sections:
                return _forbidden(f"places data ({parts[7]}) in the code section {section}")
    for line in _tool("objdump", "-d", "--no-show-raw-insn", "-M", "att", str(obj)).splitlines():
        m = _FORBIDDEN_INSN.search(line.split("#")[0])
        if m:
            return _forbidden(
                f"contains the instruction '{m.group(0).strip()}' (system calls and indirect branches are not allowed)"
            )
    return None
