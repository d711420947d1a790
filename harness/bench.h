/*
 * bench.h -- the measurement core shared by every problem's driver.
 *
 * A problem's driver.c includes this header and defines the problem hooks declared
 * below. The driver is compiled twice (lab/harness/build.py):
 *
 *   -DLAB_ROLE_MEASURER  `measure`: the trusted program. It owns the inputs, the timer,
 *                        the checks and the report, and never executes candidate code.
 *   -DLAB_ROLE_RUNNER    an object that, linked with the candidate's object, makes
 *                        `runner`: the only process in which candidate code runs.
 *
 * The two share one memory region (a memfd) and nothing else: a control page for the
 * handshake, then the problem's input and output arrays. The runner holds no file
 * descriptor, no timer state, no expected value and no report channel; before it calls
 * candidate code it installs a seccomp filter (below) that allows only what computation
 * needs. Everything in the shared region is untrusted from the measurer's side: outputs
 * are copied out as soon as a call returns, inputs are compared with the measurer's
 * private pristine copies, and control words are only compared for equality.
 *
 * Protocol of `measure` (the parent relies on it; see lab/harness/evaluate.py):
 *   0. the textbook serial baseline is timed here, before the runner exists, so nothing
 *      the candidate does can slow it down;
 *   1. the runner is started; the cost of a request's overhead (thaw, priming, an empty
 *      request) is timed before any candidate code runs;
 *   2. odd size: two calls on fresh inputs, each fully checked;
 *   3. timed size: one checked warm-up call, then timed calls on fresh inputs until
 *      min_time and min_reps are met; every timed call gets the problem's fast check.
 *      Between requests the runner is frozen (SIGSTOP): it cannot see the next inputs being
 *      written. Each request's window is timed from before the thaw (SIGCONT) to the "done"
 *      of the id posted, trusted priming included (runner_prime: its OpenMP team awake, its
 *      TLB warm for the shared pages), and the runner is frozen again at that "done", before
 *      the outputs are copied out. Time = median window minus the overhead's median;
 *   4. after timing: fresh inputs at both sizes, fully checked again;
 *   5. the runner's time between each "done" and its freeze, the control words, and its
 *      threads' CPU affinity are checked from outside (see "the accounting" below).
 * Every call's inputs come from a 64-bit seed drawn from getrandom(2) just before the
 * call, and every check vector from a seed drawn after the call's outputs were copied
 * out, so nothing the candidate can compute predicts an input or a check. The report is
 * written once, at the end, as "key value" lines on --result-fd, which only the
 * measurer holds. It names the seeds of the last inputs at both sizes with a checksum of
 * the outputs, which the parent recomputes independently.
 */
#ifndef LAB_BENCH_H
#define LAB_BENCH_H

#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#if defined(LAB_ROLE_MEASURER) == defined(LAB_ROLE_RUNNER)
#error "compile with exactly one of -DLAB_ROLE_MEASURER or -DLAB_ROLE_RUNNER"
#endif

/* ---- inputs: AES-128 in counter mode, keyed by a random seed, mirrored in lab/harness/problems.py ----
 *
 * Why a block cipher: with an invertible generator (splitmix64 before), a kernel could
 * recover the call's seed from a couple of input values and regenerate the inputs in
 * registers instead of reading them, which inflates the rate of every memory-bound
 * problem (measured: transpose 3.9x). AES keyed by the 64-bit seed cannot be inverted
 * from its output short of a 2^64 key search. The key is (seed, BENCH_KEY_TAG); stream s,
 * block j is the 128-bit counter s * 2^64 + j, stored big-endian (what the `cryptography`
 * package's CTR mode increments); value i of a stream is the i-th little-endian u64 of its
 * key stream. AES-NI does about a byte per cycle, close to what the fills cost before. */
/* Three paths give the same key stream: VAES (16 blocks per step, where the CPU has AVX-512 and
 * VAES), AES-NI (4 blocks per step) and portable C (any CPU; the only path off x86-64). Tests
 * force each (BENCH_AES_NO_VAES, BENCH_AES_PORTABLE) and compare it with the Python mirror. */
#if defined(__x86_64__) && !defined(BENCH_AES_PORTABLE)
#define BENCH_AES_NI 1
#include <immintrin.h>
#include <wmmintrin.h>
#include <smmintrin.h>
#else
#define BENCH_AES_NI 0
#endif

/* splitmix64's finalizer: the copy-out order (bench_copy_shuffled), never the inputs. */
static inline uint64_t bench_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

#define BENCH_KEY_TAG 0x6c61622d61657321ULL /* "!sea-bal": the key's fixed upper half */

typedef struct {
#if BENCH_AES_NI
    __m128i rk[11]; /* the expanded AES-128 key */
#endif
    uint8_t rb[176]; /* the same schedule as bytes (FIPS-197 order), for the portable path */
    uint64_t stream;
} bench_key;

/* ---- portable AES-128 (FIPS-197), byte by byte: the reference the other paths equal ---- */

static const uint8_t bench_sbox[256] = {
    0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
    0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
    0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
    0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
    0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
    0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
    0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
    0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
    0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
    0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
    0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
    0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
    0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
    0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
    0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
    0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
};

static inline uint8_t bench_xtime(uint8_t x) { return (uint8_t)((x << 1) ^ ((x >> 7) * 0x1b)); }

/* The AES-128 key schedule of the 16 key bytes, into rb (11 round keys of 16 bytes). */
static inline void bench_aes_soft_expand(const uint8_t key[16], uint8_t rb[176]) {
    static const uint8_t rcon[10] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36};
    memcpy(rb, key, 16);
    for (int w = 4; w < 44; w++) {
        uint8_t t[4];
        memcpy(t, rb + 4 * (w - 1), 4);
        if (w % 4 == 0) {
            uint8_t t0 = t[0];
            t[0] = (uint8_t)(bench_sbox[t[1]] ^ rcon[w / 4 - 1]);
            t[1] = bench_sbox[t[2]];
            t[2] = bench_sbox[t[3]];
            t[3] = bench_sbox[t0];
        }
        for (int b = 0; b < 4; b++) rb[4 * w + b] = (uint8_t)(rb[4 * (w - 4) + b] ^ t[b]);
    }
}

/* One block: out = AES-128(rb, in); the state is column-major, as in memory. */
static inline void bench_aes_soft_block(const uint8_t rb[176], const uint8_t in[16], uint8_t out[16]) {
    uint8_t s[16], t[16];
    for (int b = 0; b < 16; b++) s[b] = (uint8_t)(in[b] ^ rb[b]);
    for (int round = 1; round <= 10; round++) {
        for (int b = 0; b < 16; b++) t[b] = bench_sbox[s[(b + 4 * (b % 4)) % 16]]; /* SubBytes, ShiftRows */
        if (round < 10) {
            for (int c = 0; c < 4; c++) { /* MixColumns */
                uint8_t *col = t + 4 * c, a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
                uint8_t all = (uint8_t)(a0 ^ a1 ^ a2 ^ a3);
                col[0] = (uint8_t)(a0 ^ all ^ bench_xtime((uint8_t)(a0 ^ a1)));
                col[1] = (uint8_t)(a1 ^ all ^ bench_xtime((uint8_t)(a1 ^ a2)));
                col[2] = (uint8_t)(a2 ^ all ^ bench_xtime((uint8_t)(a2 ^ a3)));
                col[3] = (uint8_t)(a3 ^ all ^ bench_xtime((uint8_t)(a3 ^ a0)));
            }
        }
        for (int b = 0; b < 16; b++) s[b] = (uint8_t)(t[b] ^ rb[16 * round + b]);
    }
    memcpy(out, s, 16);
}

static inline void bench_store_be64(uint8_t *p, uint64_t v) {
    for (int b = 7; b >= 0; b--, v >>= 8) p[b] = (uint8_t)v;
}

/* Blocks block .. block + count - 1 of the stream, into out (two little-endian u64 each). */
static inline void bench_blocks_soft(const bench_key *k, uint64_t block, size_t count, uint64_t *out) {
    uint8_t in[16], ct[16];
    bench_store_be64(in, k->stream);
    for (size_t b = 0; b < count; b++) {
        bench_store_be64(in + 8, block + (uint64_t)b);
        bench_aes_soft_block(k->rb, in, ct);
        memcpy(out + 2 * b, ct, 16); /* x86-64 and aarch64 Linux are little-endian */
    }
}

#if BENCH_AES_NI
__attribute__((target("aes,sse4.1"))) static inline __m128i bench_aes_step(__m128i key, __m128i gen) {
    gen = _mm_shuffle_epi32(gen, _MM_SHUFFLE(3, 3, 3, 3));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    return _mm_xor_si128(key, gen);
}

__attribute__((target("aes,sse4.1"))) static inline void bench_expand_ni(bench_key *k, uint64_t seed) {
    k->rk[0] = _mm_set_epi64x((long long)BENCH_KEY_TAG, (long long)seed);
#define BENCH_EXPAND(i, rcon) k->rk[i] = bench_aes_step(k->rk[i - 1], _mm_aeskeygenassist_si128(k->rk[i - 1], rcon))
    BENCH_EXPAND(1, 0x01); BENCH_EXPAND(2, 0x02); BENCH_EXPAND(3, 0x04); BENCH_EXPAND(4, 0x08);
    BENCH_EXPAND(5, 0x10); BENCH_EXPAND(6, 0x20); BENCH_EXPAND(7, 0x40); BENCH_EXPAND(8, 0x80);
    BENCH_EXPAND(9, 0x1b); BENCH_EXPAND(10, 0x36);
#undef BENCH_EXPAND
}

static int bench_has_aesni(void) {
    static int has = -1;
    if (has < 0) has = __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.1");
    return has;
}

/* 16 blocks per step with VAES (AVX-512: four AES blocks per instruction), where the CPU has it;
 * the same key stream as the AES-NI loop below, about three times as fast. */
__attribute__((target("vaes,avx512f,aes,sse4.1"))) static inline void bench_blocks16(const bench_key *k,
                                                                                      uint64_t block,
                                                                                      uint64_t *out) {
    __m512i rk[11], x[4];
    for (int r = 0; r < 11; r++) rk[r] = _mm512_broadcast_i32x4(k->rk[r]);
    uint64_t in[32] __attribute__((aligned(64)));
    for (int q = 0; q < 16; q++) {
        in[2 * q] = __builtin_bswap64(k->stream);
        in[2 * q + 1] = __builtin_bswap64(block + (uint64_t)q);
    }
    for (int v = 0; v < 4; v++) x[v] = _mm512_xor_si512(_mm512_load_si512(in + 8 * v), rk[0]);
    for (int r = 1; r < 10; r++)
        for (int v = 0; v < 4; v++) x[v] = _mm512_aesenc_epi128(x[v], rk[r]);
    for (int v = 0; v < 4; v++) _mm512_storeu_si512(out + 8 * v, _mm512_aesenclast_epi128(x[v], rk[10]));
}

static int bench_has_vaes(void) {
#if defined(BENCH_AES_NO_VAES)
    return 0;
#else
    static int has = -1;
    if (has < 0) has = __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx512f");
    return has;
#endif
}

/* Values 2*block .. 2*block + 2*count - 1 of the stream, into out (4 blocks at a time, so the
 * AES units stay busy; 16 at a time with VAES). */
__attribute__((target("aes,sse4.1"))) static inline void bench_blocks_ni(const bench_key *k, uint64_t block,
                                                                          size_t count, uint64_t *out) {
    if (count >= 16 && bench_has_vaes()) {
        size_t done = count & ~(size_t)15;
        for (size_t b = 0; b < done; b += 16) bench_blocks16(k, block + b, out + 2 * b);
        block += done, out += 2 * done, count -= done;
    }
    const __m128i base = _mm_insert_epi64(_mm_setzero_si128(), (long long)__builtin_bswap64(k->stream), 0);
    size_t b = 0;
    for (; b < count; b += 4) {
        __m128i x[4] = {base, base, base, base};
        int m = count - b < 4 ? (int)(count - b) : 4;
        for (int q = 0; q < m; q++)
            x[q] = _mm_xor_si128(_mm_insert_epi64(base, (long long)__builtin_bswap64(block + b + (uint64_t)q), 1),
                                 k->rk[0]);
        for (int r = 1; r < 10; r++)
            for (int q = 0; q < m; q++) x[q] = _mm_aesenc_si128(x[q], k->rk[r]);
        for (int q = 0; q < m; q++) _mm_storeu_si128((__m128i *)(out + 2 * (b + (size_t)q)), _mm_aesenclast_si128(x[q], k->rk[10]));
    }
}
#endif

/* The key of input stream `stream` of the call with seed `seed`: the 16 bytes of (seed, tag),
 * each little-endian. */
static inline bench_key bench_stream_key(uint64_t seed, uint64_t stream) {
    bench_key k;
    uint8_t key[16];
    uint64_t tag = BENCH_KEY_TAG;
    memcpy(key, &seed, 8);
    memcpy(key + 8, &tag, 8);
    k.stream = stream;
    bench_aes_soft_expand(key, k.rb);
#if BENCH_AES_NI
    if (bench_has_aesni()) bench_expand_ni(&k, seed);
#endif
    return k;
}

/* Values 2*block .. 2*block + 2*count - 1 of the stream, into out: by AES-NI (and VAES) where
 * the CPU has them, else in portable C. */
static inline void bench_blocks(const bench_key *k, uint64_t block, size_t count, uint64_t *out) {
#if BENCH_AES_NI
    if (bench_has_aesni()) {
        bench_blocks_ni(k, block, count, out);
        return;
    }
#endif
    bench_blocks_soft(k, block, count, out);
}

/* Value i of the stream (problem-specific generators, e.g. a sparse matrix's structure,
 * draw from it; mirrored by lab.harness.problems.draw). */
static inline uint64_t bench_draw(const bench_key *k, size_t i) {
    uint64_t pair[2];
    bench_blocks(k, (uint64_t)(i / 2), 1, pair);
    return pair[i % 2];
}

/* Run BODY for every value z of the stream, i = 0 .. count-1, generated in chunks. */
#define BENCH_EACH_DRAW(key, count, BODY)                                               \
    do {                                                                                \
        uint64_t bench_chunk_[512];                                                     \
        for (size_t bench_i0_ = 0; bench_i0_ < (count); bench_i0_ += 512) {             \
            size_t bench_m_ = (count) - bench_i0_ < 512 ? (count) - bench_i0_ : 512;    \
            bench_blocks(&(key), bench_i0_ / 2, (bench_m_ + 1) / 2, bench_chunk_);      \
            for (size_t bench_j_ = 0; bench_j_ < bench_m_; bench_j_++) {                \
                size_t i = bench_i0_ + bench_j_;                                        \
                uint64_t z = bench_chunk_[bench_j_];                                    \
                BODY;                                                                   \
            }                                                                           \
        }                                                                               \
    } while (0)

/* x[i] = uniform double in [-1, 1), a pure function of (seed, stream, i). */
static inline void bench_fill(double *x, size_t count, uint64_t seed, uint64_t stream) {
    bench_key key = bench_stream_key(seed, stream);
    BENCH_EACH_DRAW(key, count, x[i] = (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

/* x[i] = lo + (draw mod (hi - lo + 1)): integers in [lo, hi] (nearly uniform; the bias of the
 * modulo is below 2^-30 for the ranges problems use). */
static inline void bench_fill_i64(int64_t *x, size_t count, uint64_t seed, uint64_t stream, int64_t lo, int64_t hi) {
    bench_key key = bench_stream_key(seed, stream);
    uint64_t span = (uint64_t)(hi - lo) + 1;
    BENCH_EACH_DRAW(key, count, x[i] = lo + (int64_t)(z % span));
}

static inline void bench_fill_i32(int32_t *x, size_t count, uint64_t seed, uint64_t stream, int32_t lo, int32_t hi) {
    bench_key key = bench_stream_key(seed, stream);
    uint64_t span = (uint64_t)((int64_t)hi - lo) + 1;
    BENCH_EACH_DRAW(key, count, x[i] = lo + (int32_t)(z % span));
}

/* Bytes: the top byte of each draw. */
static inline void bench_fill_u8(uint8_t *x, size_t count, uint64_t seed, uint64_t stream) {
    bench_key key = bench_stream_key(seed, stream);
    BENCH_EACH_DRAW(key, count, x[i] = (uint8_t)(z >> 56));
}

/* ---- the shared region: a control page, then the problem's arrays ---- */

#define BENCH_CTL_BYTES 4096
#define BENCH_OP_CALL 1
#define BENCH_OP_NOOP 2
#define BENCH_OP_PRIME 3 /* trusted, timed with the request after it: wake every OpenMP thread, touch every shared page */
#define BENCH_TRAP_EXIT 159 /* the runner's exit status after a denied system call */

typedef struct {
    uint32_t ready;   /* runner -> measurer: 1 once the sandbox is in force */
    uint32_t go;      /* measurer -> runner: id of the current request (random, see next_id) */
    uint32_t done;    /* runner -> measurer: id of the last finished request */
    int32_t op, n;    /* the request */
    int32_t trap_nr;  /* the system call that was denied, if any */
} bench_ctl;

static long bench_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *timeout) {
    return syscall(SYS_futex, addr, op, val, timeout, NULL, 0);
}

static size_t bench_align(size_t bytes) { return (bytes + 4095) & ~(size_t)4095; }

/* ---- problem hooks: declared here, defined by the problem's driver.c ---- */

/* Both roles: the shared arrays, laid out by bench_layout() in index order, each on its own pages. */
static size_t problem_array_bytes(int k, int n);         /* bytes of shared array k at size n; 0 past the last */
static void problem_bind(unsigned char *shared);         /* point the shared arrays at bench_array(shared, k) */
#ifdef LAB_ROLE_RUNNER
static void problem_invoke(int n);                        /* call the candidate on the shared arrays */
#else
static void problem_alloc(int max_n);                     /* the measurer's private arrays */
static void problem_fill(int n, uint64_t seed);          /* private inputs + shared copies; poison shared outputs */
static void problem_collect(int n);                       /* copy the shared outputs into private memory */
static void problem_call_baseline(int n);                 /* textbook serial version, on private arrays */
static int problem_check_full(int n, double tol, char *why, size_t len);                 /* 0 = ok */
static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len);  /* 0 = ok */
static double problem_flops(int n);
static void problem_checksum(int n, double *sum, double *abs_sum);                       /* of the outputs (bench_checksum) */
#endif

#define BENCH_MAX_ARRAYS 8
static size_t bench_offset[BENCH_MAX_ARRAYS];
static int bench_narrays, bench_max_n;

/* Lay the problem's arrays out for sizes up to max_n; returns the bytes they need. */
static size_t bench_layout(int max_n) {
    size_t off = 0, b;
    bench_max_n = max_n;
    for (bench_narrays = 0; bench_narrays < BENCH_MAX_ARRAYS && (b = problem_array_bytes(bench_narrays, max_n));
         bench_narrays++) {
        bench_offset[bench_narrays] = off;
        off += bench_align(b);
    }
    return off;
}

static inline void *bench_array(unsigned char *shared, int k) { return shared + bench_offset[k]; }

static inline void *bench_alloc_bytes(size_t bytes) {
    void *p = aligned_alloc(64, ((bytes + 63) / 64) * 64 + 64);
    if (!p) { fprintf(stderr, "bench: out of memory\n"); exit(3); }
    return p;
}

static inline void *bench_alloc(size_t count) { return bench_alloc_bytes(count * sizeof(double)); }

/* Poison an output buffer so that code which skips elements is caught. */
static inline void bench_poison(double *x, size_t count) {
    for (size_t i = 0; i < count; i++) x[i] = NAN;
}

/* The same for integer outputs: a value no correct element has (for the problems here). */
#define BENCH_POISON_I64 ((int64_t)0x5A5A5A5A5A5A5A5AULL)
static inline void bench_poison_i64(int64_t *x, size_t count) {
    for (size_t i = 0; i < count; i++) x[i] = BENCH_POISON_I64;
}

#ifdef LAB_ROLE_MEASURER
/* problem_checksum of an output of `count` doubles: their sum and the sum of their absolute
 * values, added in index order (the parent compares both with its NumPy reference's). */
static inline void bench_checksum(const double *x, size_t count, double *sum, double *abs_sum) {
    double s = 0.0, a = 0.0;
    for (size_t i = 0; i < count; i++) { s += x[i]; a += fabs(x[i]); }
    *sum = s; *abs_sum = a;
}
#endif

#ifdef LAB_ROLE_RUNNER
/* ======================================================================================
 * The runner: maps the shared region, drops every descriptor, installs the seccomp
 * filter, then serves requests. Candidate code runs only inside problem_invoke().
 * ====================================================================================== */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>

static bench_ctl *runner_ctl;

/* A denied system call lands here (SECCOMP_RET_TRAP delivers SIGSYS even when blocked):
 * record which one and leave at once. */
static void runner_on_sigsys(int sig, siginfo_t *info, void *context) {
    (void)sig; (void)context;
    __atomic_store_n(&runner_ctl->trap_nr, info->si_syscall, __ATOMIC_SEQ_CST);
    syscall(SYS_exit_group, BENCH_TRAP_EXIT);
}

#define BPF_NR offsetof(struct seccomp_data, nr)
#define BPF_ARG_LO(k) offsetof(struct seccomp_data, args[k]) /* low 32 bits on little-endian */
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IF_NR(nr, action) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(action)
#define DENY(err) (SECCOMP_RET_ERRNO | ((err) & SECCOMP_RET_DATA))

/* What computation needs and nothing else (documented in the README's sandbox section):
 *   allowed        memory (brk, munmap, mremap, madvise; mmap/mprotect without PROT_EXEC),
 *                  futex, sched_yield, sched_getaffinity, thread creation (clone with
 *                  CLONE_THREAD only), the per-thread setup glibc does (set_robust_list,
 *                  rseq, rt_sigprocmask), clock reads, getpid/gettid, exit;
 *   refused (errno) clone3 (ENOSYS, so glibc falls back to clone), sched_setaffinity,
 *                  and the calls of glibc's crash path (write, writev, openat, tgkill,
 *                  rt_sigaction), so a crashing kernel still dies of its own signal;
 *   trapped        everything else: the run ends and the kernel is `forbidden`. */
#if defined(__x86_64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define BENCH_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the runner's seccomp filter is written for the x86-64 and aarch64 Linux ABIs only"
#endif
static int runner_seccomp(void) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BENCH_AUDIT_ARCH, 1, 0),
        RET(SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, BPF_NR),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* x86's x32 ABI (no such numbers on aarch64) */
        RET(SECCOMP_RET_TRAP),
        IF_NR(__NR_brk, SECCOMP_RET_ALLOW),
        IF_NR(__NR_munmap, SECCOMP_RET_ALLOW),
        IF_NR(__NR_mremap, SECCOMP_RET_ALLOW),
        IF_NR(__NR_madvise, SECCOMP_RET_ALLOW),
        IF_NR(__NR_futex, SECCOMP_RET_ALLOW),
        IF_NR(__NR_sched_yield, SECCOMP_RET_ALLOW),
        IF_NR(__NR_sched_getaffinity, SECCOMP_RET_ALLOW),
        IF_NR(__NR_set_robust_list, SECCOMP_RET_ALLOW),
        IF_NR(__NR_rseq, SECCOMP_RET_ALLOW),
        IF_NR(__NR_rt_sigprocmask, SECCOMP_RET_ALLOW),
        IF_NR(__NR_rt_sigreturn, SECCOMP_RET_ALLOW),
        IF_NR(__NR_clock_gettime, SECCOMP_RET_ALLOW),
        IF_NR(__NR_clock_getres, SECCOMP_RET_ALLOW),
        IF_NR(__NR_gettimeofday, SECCOMP_RET_ALLOW),
        IF_NR(__NR_getpid, SECCOMP_RET_ALLOW),
        IF_NR(__NR_gettid, SECCOMP_RET_ALLOW),
        IF_NR(__NR_exit, SECCOMP_RET_ALLOW),
        IF_NR(__NR_exit_group, SECCOMP_RET_ALLOW),
        IF_NR(__NR_clone3, DENY(ENOSYS)),
        IF_NR(__NR_sched_setaffinity, DENY(EPERM)),
        IF_NR(__NR_write, DENY(EPERM)),
        IF_NR(__NR_writev, DENY(EPERM)),
        IF_NR(__NR_openat, DENY(EPERM)),
        IF_NR(__NR_tgkill, DENY(EPERM)),
        IF_NR(__NR_rt_sigaction, DENY(EPERM)),
        /* mmap and mprotect: never executable memory (no code the object checks did not see). */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, BPF_ARG_LO(2)),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
        RET(DENY(EPERM)),
        RET(SECCOMP_RET_ALLOW),
        /* clone: threads only, never a new process. */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, BPF_ARG_LO(0)),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
        RET(DENY(EPERM)),
        RET(SECCOMP_RET_ALLOW),
        RET(SECCOMP_RET_TRAP),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

/* Trusted code, run before every request inside its timed window: every thread of the OpenMP
 * team wakes (a thawed team otherwise pays its cross-CPU wake-ups, and a cold vCPU its exit
 * from idle, inside the first parallel region) and touches one byte per page of the shared
 * arrays (the runner's TLB entries for them are gone after the measurer wrote the inputs from
 * its own address space). What that costs is measured with the handshake, before any candidate
 * code ran, and subtracted; so a kernel that takes priming's place (a call the loop makes again
 * because the kernel rewrote `go`, or a kernel that answers requests itself) is timed all the
 * same. Candidate code does not run here. */
static void runner_prime(const unsigned char *arrays, size_t bytes) {
#pragma omp parallel
    {
        unsigned sum = 0;
        for (size_t i = 0; i < bytes; i += 4096) sum += ((const volatile unsigned char *)arrays)[i];
        __asm__ volatile("" ::"r"(sum));
    }
}

int main(int argc, char **argv) {
    int fd = -1, max_n = 0;
    size_t bytes = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--shm-fd")) fd = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-n")) max_n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bytes")) bytes = strtoull(argv[i + 1], NULL, 10);
    }
    if (fd < 0 || max_n < 1 || bytes != BENCH_CTL_BYTES + bench_layout(max_n)) {
        fprintf(stderr, "runner: bad arguments\n");
        return 2;
    }
    unsigned char *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) { perror("runner: mmap"); return 2; }
    runner_ctl = (bench_ctl *)base;
    problem_bind(base + BENCH_CTL_BYTES);
    struct sigaction sa = {.sa_sigaction = runner_on_sigsys, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL)) { perror("runner: sigaction"); return 2; }
    /* No descriptor survives: not the shared memory's, not stdin/stdout/stderr. */
    /* Start OpenMP's thread pool now, while threads may still be created with their CPU
     * binding (OMP_PROC_BIND); the filter below then covers every thread (TSYNC). */
#pragma omp parallel
    { __asm__ volatile("" ::: "memory"); }
#ifdef LAB_UNSANDBOXED
    /* A correctness check under qemu-user only (lab.harness.foreign), never a measurement: the
     * emulator cannot install a seccomp filter, and closing every descriptor would close its own. */
    (void)runner_seccomp;
#else
    if (syscall(SYS_close_range, 0U, ~0U, 0U)) return 2;
    if (runner_seccomp()) return 2;
#endif

    bench_ctl *ctl = runner_ctl;
    __atomic_store_n(&ctl->ready, 1, __ATOMIC_SEQ_CST);
    bench_futex(&ctl->ready, FUTEX_WAKE, 1, NULL);
    uint32_t last = 0;
    for (;;) {
        uint32_t go;
        while ((go = __atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE)) == last)
            bench_futex(&ctl->go, FUTEX_WAIT, last, NULL);
        last = go;
        int op = ctl->op, n = ctl->n;
        if (op == BENCH_OP_CALL && n >= 1 && n <= max_n) problem_invoke(n);
        if (op == BENCH_OP_PRIME) runner_prime(base + BENCH_CTL_BYTES, bytes - BENCH_CTL_BYTES);
        __atomic_store_n(&ctl->done, go, __ATOMIC_RELEASE);
        bench_futex(&ctl->done, FUTEX_WAKE, 1, NULL);
    }
}

#else
/* ======================================================================================
 * The measurer.
 * ====================================================================================== */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* A fresh 64-bit seed from the kernel's random pool. */
static uint64_t bench_random_seed(void) {
    uint64_t s = 0;
    while (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s) {
        if (errno != EINTR) { perror("bench: getrandom"); exit(3); }
    }
    return s;
}

/* memcpy in 4 KiB chunks taken in a random order: which part of an output is read first
 * cannot be predicted, so no part of it may still be unwritten when the call returns. */
static inline void bench_copy_shuffled(void *dst, const void *src, size_t bytes) {
    enum { CHUNK = 4096 };
    size_t chunks = (bytes + CHUNK - 1) / CHUNK;
    static uint32_t *order;
    static size_t cap;
    if (chunks > cap) {
        order = realloc(order, chunks * sizeof *order);
        if (!order) { perror("bench: realloc"); exit(3); }
        cap = chunks;
    }
    uint64_t state = bench_random_seed();
    for (size_t i = 0; i < chunks; i++) order[i] = (uint32_t)i;
    for (size_t i = chunks; i > 1; i--) { /* Fisher-Yates */
        state += 0x9E3779B97F4A7C15ULL;
        size_t j = (size_t)(bench_mix(state) % i);
        uint32_t tmp = order[i - 1]; order[i - 1] = order[j]; order[j] = tmp;
    }
    for (size_t i = 0; i < chunks; i++) {
        size_t off = (size_t)order[i] * CHUNK;
        memcpy((char *)dst + off, (const char *)src + off, off + CHUNK <= bytes ? CHUNK : bytes - off);
    }
}

static double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Largest |got - want| relative to `scale`; NaN/Inf in `got` counts as infinite. */
static inline double bench_max_err(const double *got, const double *want, size_t count, double scale) {
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs(got[i] - want[i]) / scale;
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int k) {
    qsort(t, (size_t)k, sizeof(double), cmp_double);
    return k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
}

typedef struct {
    int n, odd_n, threads, min_reps, max_reps, result_fd, baseline, baseline_only, kernel_mb;
    double min_time_s, baseline_min_time_s, tol;
    const char *nonce, *runner;
} bench_args;

static char bench_report[4096];
static size_t bench_report_len;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(bench_report + bench_report_len, sizeof bench_report - bench_report_len, fmt, ap);
    va_end(ap);
    if (w > 0) bench_report_len += (size_t)w;
    if (bench_report_len >= sizeof bench_report) bench_report_len = sizeof bench_report - 1;
}

/* ---- the runner, from the measurer's side ---- */

static bench_ctl *ctl;
static pid_t runner_pid = -1;
static clockid_t runner_clock;
static char runner_fate[160]; /* how the runner ended, when it ended early */
static int runner_trapped;

static double runner_cpu(void) {
    struct timespec ts;
    if (clock_gettime(runner_clock, &ts)) return 0.0; /* gone: its fate is reported instead */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Record how the runner ended (a waitpid status). */
static void runner_ended(int status) {
    runner_pid = -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == BENCH_TRAP_EXIT) {
        runner_trapped = 1;
        snprintf(runner_fate, sizeof runner_fate, "made system call %d, which the sandbox denies",
                 __atomic_load_n(&ctl->trap_nr, __ATOMIC_SEQ_CST));
    } else if (WIFSIGNALED(status))
        snprintf(runner_fate, sizeof runner_fate, "the kernel's process was killed by %s",
                 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "a signal");
    else
        snprintf(runner_fate, sizeof runner_fate, "the kernel's process exited with status %d",
                 WEXITSTATUS(status));
}

/* Nonzero once the runner has died; fills runner_fate. */
static int runner_gone(int block) {
    if (runner_pid < 0) return 1;
    int status;
    pid_t r;
    do r = waitpid(runner_pid, &status, block ? 0 : WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0) return 0;
    if (r < 0) {
        runner_pid = -1;
        snprintf(runner_fate, sizeof runner_fate, "lost the kernel's process");
    } else
        runner_ended(status);
    return 1;
}

/* Freeze the runner (every thread) and wait until it is frozen: between calls it can neither
 * see the next inputs being written nor keep working on the last ones. -1 if it died. */
static int runner_stop(void) {
    if (runner_pid < 0 || kill(runner_pid, SIGSTOP)) return runner_gone(1), -1;
    for (;;) {
        int status;
        pid_t r = waitpid(runner_pid, &status, WUNTRACED);
        if (r < 0 && errno == EINTR) continue;
        if (r == runner_pid && WIFSTOPPED(status)) return 0;
        if (r == runner_pid) runner_ended(status);
        else snprintf(runner_fate, sizeof runner_fate, "lost the kernel's process");
        runner_pid = -1;
        return -1;
    }
}

/* ---- the accounting: nothing the kernel does outside a timed window counts ----
 *
 * The kernel shares its address space with the runner's trusted loop, and the control page
 * is writable from there, so nothing inside the runner can be hidden from the kernel: it can
 * make the loop call it again, or never return and answer requests itself. What it cannot
 * touch is the measurer's clock and its own process's run state. So the rule is one of
 * accounting, written once, here, for every request (calls, checks, the odd size, the
 * handshake, and whatever is added later):
 *
 *   - the runner runs only between the SIGCONT and the completed SIGSTOP of a request;
 *   - the timed window starts before SIGCONT and ends when the measurer sees "done" for the id
 *     it posted: the thaw, the trusted priming and the request itself, so whatever the kernel
 *     does on the request's inputs lands inside it. The calibrated cost of a thaw, priming and
 *     an empty request (measured before any candidate code ran) is subtracted, never more
 *     than half a call;
 *   - at "done" the runner is frozen at once, before the outputs are copied out: what it left
 *     unwritten stays unwritten, and the untimed rest of the request is only the time the
 *     freeze takes (no more than the OS needs to stop `threads` threads; a kernel cannot delay
 *     a SIGSTOP). More than BENCH_UNTIMED_SLACK of the timed time plus BENCH_UNTIMED_SLACK_S
 *     per request is `suspicious`.
 *
 * The runner's CPU clock is read only while it is frozen (the OS brings another process's
 * running threads' CPU time up to date only at its scheduler ticks, so a reading taken while
 * they run lags by up to a tick each): per request, thaw to freeze, exactly. Startup plus the
 * requests add up to the runner's clock; the report gives both, and the total the OS gives for
 * the reaped process (tests/test_runner.py compares them). */
#define BENCH_HANDSHAKES 64          /* empty requests timed for the handshake's median */
#define BENCH_UNTIMED_SLACK 0.25     /* of the timed time: a freeze waits for the CPUs' scheduling */
#define BENCH_UNTIMED_SLACK_S 2e-3   /* per request: a scheduler slice of another process first */
static double startup_cpu, request_cpu, timed_wall, untimed_wall;
static int requests;
static uint32_t last_id; /* the id of the last request posted */

/* A request id nobody can predict (the runner's loop calls again on any id it has not seen, so
 * a kernel that could guess the next one could post it itself): random, never 0 or the last. */
static uint32_t next_id(void) {
    uint32_t id;
    do {
        uint64_t r = bench_random_seed();
        id = (uint32_t)r ^ (uint32_t)(r >> 32);
    } while (id == 0 || id == last_id);
    return last_id = id;
}

/* Wait until *word == want, or the runner dies (returns -1). */
static int wait_word(uint32_t *word, uint32_t want) {
    const struct timespec slice = {0, 50 * 1000 * 1000};
    for (;;) {
        uint32_t cur = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (cur == want) return 0;
        bench_futex(word, FUTEX_WAIT, cur, &slice);
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != want && runner_gone(0)) return -1;
    }
}

/* Post request `op` with a fresh id; wait for its "done". */
static int post(int op, uint32_t *id) {
    ctl->op = op;
    *id = next_id();
    __atomic_store_n(&ctl->go, *id, __ATOMIC_RELEASE);
    bench_futex(&ctl->go, FUTEX_WAKE, 1, NULL);
    return wait_word(&ctl->done, *id);
}

#define BENCH_DIED (-1.0)
#define BENCH_TAMPERED (-2.0) /* the control words held other than what the measurer posted */

/* One request to the (frozen) runner: thaw it, prime it, post the request, freeze it at "done".
 * Returns the timed window in seconds (thaw to "done"), BENCH_DIED or BENCH_TAMPERED. */
static double request(int op, int n) {
    ctl->n = n;
    uint32_t id;
    double cpu0 = runner_cpu(); /* frozen: exact */
    double t0 = bench_now();
    kill(runner_pid, SIGCONT);
    /* The trusted priming (runner_prime), then the request itself, both inside the window. */
    if (post(BENCH_OP_PRIME, &id) || post(op, &id)) return BENCH_DIED;
    double t1 = bench_now();
    if (runner_stop()) return BENCH_DIED;
    untimed_wall += bench_now() - t1;
    timed_wall += t1 - t0;
    request_cpu += runner_cpu() - cpu0;
    requests++;
    /* Frozen: the words must still hold the id posted (only the kernel could have changed them). */
    if (__atomic_load_n(&ctl->go, __ATOMIC_ACQUIRE) != id || __atomic_load_n(&ctl->done, __ATOMIC_ACQUIRE) != id)
        return BENCH_TAMPERED;
    if (op == BENCH_OP_CALL) problem_collect(n);
    return t1 - t0;
}

/* The untimed time (from each "done" to its completed freeze) beyond what stopping the threads
 * takes, in seconds (> 0: `suspicious`). */
static double untimed_excess(void) {
    return untimed_wall - (BENCH_UNTIMED_SLACK * timed_wall + BENCH_UNTIMED_SLACK_S * requests);
}

/* The handshake's requests stand for a call's: before each, the measurer writes a byte of every
 * shared page, as filling the inputs does (the runner's TLB entries and cached lines for them
 * are then gone, which the priming pays for inside the window). */
static void bench_touch_pages(unsigned char *arrays, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 4096) ((volatile unsigned char *)arrays)[i] = arrays[i];
}

static int spawn_runner(const char *path, int memfd, int max_n, size_t bytes, int kernel_mb) {
    char fd_s[16], n_s[16], bytes_s[32];
    snprintf(fd_s, sizeof fd_s, "%d", 3);
    snprintf(n_s, sizeof n_s, "%d", max_n);
    snprintf(bytes_s, sizeof bytes_s, "%zu", bytes);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (kernel_mb > 0) { /* the kernel's own budget; the measurer's share is not its to take */
            struct rlimit lim = {(rlim_t)kernel_mb << 20, (rlim_t)kernel_mb << 20};
            if (setrlimit(RLIMIT_AS, &lim)) _exit(126);
        }
        /* fd 3 in the runner; dup2 onto itself would keep close-on-exec set. */
        int moved = memfd == 3 ? fcntl(3, F_SETFD, 0) == 0 : dup2(memfd, 3) == 3;
        if (!moved) _exit(126);
        syscall(SYS_close_range, 4U, ~0U, 0U);
        char *argv[] = {(char *)path, "--shm-fd", fd_s, "--max-n", n_s, "--bytes", bytes_s, NULL};
        execv(path, argv);
        _exit(127);
    }
    runner_pid = pid;
    if (clock_getcpuclockid(pid, &runner_clock)) return -1;
    return 0;
}

/* Every thread of the runner must stay on the CPUs this evaluation was granted. */
static int runner_affinity_ok(const cpu_set_t *granted, char *why, size_t len) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)runner_pid);
    DIR *d = opendir(path);
    if (!d) return 1; /* no /proc here: the seccomp filter alone refuses affinity changes */
    struct dirent *e;
    int ok = 1;
    while ((e = readdir(d))) {
        int tid = atoi(e->d_name);
        cpu_set_t set;
        if (tid <= 0 || sched_getaffinity(tid, sizeof set, &set)) continue;
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set) && !CPU_ISSET(c, granted)) {
                snprintf(why, len, "thread %d of the kernel's process may run on CPU %d, which was not granted", tid, c);
                ok = 0;
            }
    }
    closedir(d);
    return ok;
}

/* One write(2) of the whole report, so the parent sees all of it or none. */
static int finish(const bench_args *a, const char *status, const char *detail) {
    double total_cpu = -1.0;
    if (runner_pid > 0) { /* done with it: no exit path of its own to wait for */
        kill(runner_pid, SIGKILL);
        struct rusage ru;
        while (wait4(runner_pid, NULL, 0, &ru) < 0 && errno == EINTR) {}
        /* The OS's own total for the reaped process, beside the windows' sum (test_runner.py). */
        total_cpu = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                    1e-6 * (double)ru.ru_stime.tv_usec;
    }
    char head[512];
    int w = snprintf(head, sizeof head, "nonce %s\nstatus %s\ndetail %s\nrunner_total_cpu_s %.6f\n", a->nonce,
                     status, detail, total_cpu);
    if (w < 0 || w >= (int)sizeof head) w = (int)sizeof head - 1;
    char out[sizeof head + sizeof bench_report];
    memcpy(out, head, (size_t)w);
    memcpy(out + w, bench_report, bench_report_len);
    size_t len = (size_t)w + bench_report_len;
    ssize_t done = write(a->result_fd, out, len);
    return done == (ssize_t)len ? 0 : 4;
}

static int runner_failed(const bench_args *a, const char *when) {
    char detail[320];
    runner_gone(1);
    snprintf(detail, sizeof detail, "%s: %s", when, runner_fate);
    return finish(a, runner_trapped ? "forbidden" : "runtime_error", detail);
}

static int parse_args(int argc, char **argv, bench_args *a) {
    *a = (bench_args){.n = 256, .odd_n = 77, .threads = 1, .min_reps = 5, .max_reps = 100000,
                      .result_fd = 3, .baseline = 1, .min_time_s = 0.2,
                      .baseline_min_time_s = 0.1, .tol = 1e-10, .nonce = "-", .runner = "./runner"};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--n")) a->n = atoi(v);
        else if (!strcmp(k, "--odd-n")) a->odd_n = atoi(v);
        else if (!strcmp(k, "--threads")) a->threads = atoi(v);
        else if (!strcmp(k, "--min-reps")) a->min_reps = atoi(v);
        else if (!strcmp(k, "--max-reps")) a->max_reps = atoi(v);
        else if (!strcmp(k, "--result-fd")) a->result_fd = atoi(v);
        else if (!strcmp(k, "--baseline")) a->baseline = atoi(v);
        else if (!strcmp(k, "--baseline-only")) a->baseline_only = atoi(v);
        else if (!strcmp(k, "--kernel-memory-mb")) a->kernel_mb = atoi(v);
        else if (!strcmp(k, "--min-time")) a->min_time_s = atof(v);
        else if (!strcmp(k, "--baseline-min-time")) a->baseline_min_time_s = atof(v);
        else if (!strcmp(k, "--tol")) a->tol = atof(v);
        else if (!strcmp(k, "--nonce")) a->nonce = v;
        else if (!strcmp(k, "--runner")) a->runner = v;
        else { fprintf(stderr, "bench: unknown option %s\n", k); return 2; }
    }
    if (a->n < 1 || a->odd_n < 1 || a->threads < 1 || a->min_reps < 1 || a->max_reps < a->min_reps) {
        fprintf(stderr, "bench: bad sizes or counts\n");
        return 2;
    }
    return 0;
}

/* The shared bytes right past each array's size-n extent: up to BENCH_CANARY_BYTES of them
 * (fewer where the array's pages end first) hold a canary while a call runs, a different
 * byte per array (so copying one array's slack into another's changes something). A call
 * that writes there is wrong_result. Only a window, not the whole slack: at the odd size
 * the slack is most of a buffer sized for the timed size, megabytes per call. */
#define BENCH_CANARY_BYTES ((size_t)64 * 1024)
static unsigned char *shared_arrays;

static unsigned char bench_canary_byte(int k) { return (unsigned char)(0xA5 + 0x3B * k); }

static size_t bench_canary_window(int k, int n, size_t *used) {
    size_t cap = bench_align(problem_array_bytes(k, bench_max_n));
    *used = problem_array_bytes(k, n);
    return cap - *used < BENCH_CANARY_BYTES ? cap - *used : BENCH_CANARY_BYTES;
}

static void bench_canary_set(int n) {
    for (int k = 0; k < bench_narrays; k++) {
        size_t used, window = bench_canary_window(k, n, &used);
        memset(shared_arrays + bench_offset[k] + used, bench_canary_byte(k), window);
    }
}

static int bench_canary_intact(int n, char *why, size_t len) {
    static unsigned char expected[BENCH_CANARY_BYTES];
    for (int k = 0; k < bench_narrays; k++) {
        size_t used, window = bench_canary_window(k, n, &used);
        const unsigned char *got = shared_arrays + bench_offset[k] + used;
        memset(expected, bench_canary_byte(k), window);
        if (memcmp(got, expected, window) == 0) continue;
        size_t i = 0;
        while (got[i] == expected[i]) i++;
        snprintf(why, len, "wrote outside its arrays (argument array %d, %zu bytes past its end)", k, i);
        return 0;
    }
    return 1;
}

/* One checked call on fresh inputs: fill, call, copy out, check. 0 = ok, 1 = wrong, -1 = runner died,
 * -2 = the control words were rewritten. */
static int checked_call(int n, double tol, int full, double *elapsed, uint64_t *seed_out, char *why, size_t len) {
    uint64_t seed = bench_random_seed();
    problem_fill(n, seed);
    bench_canary_set(n);
    double t = request(BENCH_OP_CALL, n);
    if (t < 0) return t == BENCH_TAMPERED ? -2 : -1;
    if (!bench_canary_intact(n, why, len)) return 1;
    if (elapsed) *elapsed = t;
    if (seed_out) *seed_out = seed;
    if (full) return problem_check_full(n, tol, why, len) ? 1 : 0;
    return problem_check_fast(n, tol, bench_random_seed(), why, len) ? 1 : 0;
}

/* The verdict on a checked call that did not pass: r as checked_call returns it, `when` for a
 * runner that died, `what` (with n) for wrong outputs. */
static int call_failed(const bench_args *a, int r, const char *when, int n, const char *what, const char *why) {
    char detail[320];
    if (r == -1) return runner_failed(a, when);
    if (r == -2) {
        snprintf(detail, sizeof detail, "%s: the kernel's process rewrote the harness's control words", when);
        return finish(a, "suspicious", detail);
    }
    snprintf(detail, sizeof detail, "n=%d %s: %s", n, what, why);
    return finish(a, "wrong_result", detail);
}

int main(int argc, char **argv) {
    bench_args a;
    if (parse_args(argc, argv, &a)) return 2;
    prctl(PR_SET_DUMPABLE, 0); /* the runner shares our uid: no ptrace or /proc/pid/mem of us, ever */
    cpu_set_t granted;
    if (sched_getaffinity(0, sizeof granted, &granted)) { perror("bench: sched_getaffinity"); return 3; }
    int max_n = a.n > a.odd_n ? a.n : a.odd_n;
    problem_alloc(max_n);
    size_t bytes = BENCH_CTL_BYTES + bench_layout(max_n);
    int memfd = memfd_create("lab-shared", MFD_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, (off_t)bytes)) { perror("bench: memfd"); return 3; }
    unsigned char *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (base == MAP_FAILED) { perror("bench: mmap"); return 3; }
    ctl = (bench_ctl *)base;
    shared_arrays = base + BENCH_CTL_BYTES;
    problem_bind(shared_arrays);
    double *times = bench_alloc((size_t)a.max_reps);
    char why[256] = "";
    char what[32];

    /* 0. the baseline, before any candidate code exists on this machine's CPUs for us. */
    if (a.baseline) {
        double total = 0.0;
        int breps = 0;
        while ((total < a.baseline_min_time_s || breps < a.min_reps) && breps < a.max_reps) {
            problem_fill(a.n, bench_random_seed());
            double t0 = bench_now();
            problem_call_baseline(a.n);
            double t = bench_now() - t0;
            times[breps++] = t;
            total += t;
        }
        double bmed = median(times, breps);
        report("baseline_reps %d\nbaseline_time_s %.9g\nbaseline_gflops %.9g\n", breps, bmed,
               problem_flops(a.n) / bmed * 1e-9);
    }
    if (a.baseline_only) return finish(&a, "ok", "-"); /* calibration (lab/harness/plausibility.py) */

    /* 1. the runner, and the cost of one handshake (an empty request). */
    if (spawn_runner(a.runner, memfd, max_n, bytes, a.kernel_mb)) { perror("bench: spawn"); return 3; }
    if (wait_word(&ctl->ready, 1) || runner_stop()) return runner_failed(&a, "while starting");
    /* The measurer shares the first granted CPU with the runner's first thread (OpenMP binds
     * it there), so a handshake never needs a wake-up across CPUs. */
    cpu_set_t first;
    CPU_ZERO(&first);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &granted)) { CPU_SET(c, &first); break; }
    sched_setaffinity(0, sizeof first, &first);
    startup_cpu = runner_cpu();
    for (int k = 0; k < BENCH_HANDSHAKES; k++) {
        bench_touch_pages(shared_arrays, bytes - BENCH_CTL_BYTES);
        if ((times[k] = request(BENCH_OP_NOOP, 0)) < 0) return runner_failed(&a, "during the handshake");
    }
    double handshake = median(times, BENCH_HANDSHAKES);

    /* 2. odd size, twice: code correct only at some sizes, or only on a first call, fails here. */
    int r;
    for (int k = 0; k < 2; k++) {
        if ((r = checked_call(a.odd_n, a.tol, 1, NULL, NULL, why, sizeof why))) {
            snprintf(what, sizeof what, "call %d", k + 1);
            return call_failed(&a, r, "at the odd size", a.odd_n, what, why);
        }
    }
    /* 3. timed size: a checked warm-up call, then the timed loop (fast check on every call). */
    if ((r = checked_call(a.n, a.tol, 1, NULL, NULL, why, sizeof why)))
        return call_failed(&a, r, "in the warm-up call", a.n, "warm-up call", why);
    double total = 0.0;
    int reps = 0;
    while ((total < a.min_time_s || reps < a.min_reps) && reps < a.max_reps) {
        if ((r = checked_call(a.n, a.tol, 0, &times[reps], NULL, why, sizeof why))) {
            snprintf(what, sizeof what, "timed call %d", reps + 1);
            return call_failed(&a, r, "in a timed call", a.n, what, why);
        }
        total += times[reps++];
    }
    /* The handshake's cost (thaw, priming, an empty request; measured before any candidate code
     * ran, so the candidate cannot inflate it) is not the kernel's: subtract it, never more than
     * half a call. */
    double raw = median(times, reps);
    double med = raw - handshake > 0.5 * raw ? raw - handshake : 0.5 * raw;
    /* 4. after timing: fresh inputs, full checks at both sizes (catches caching and decay). */
    uint64_t big_seed, odd_seed;
    if ((r = checked_call(a.n, a.tol, 1, NULL, &big_seed, why, sizeof why)))
        return call_failed(&a, r, "after timing", a.n, "after timing", why);
    double big_sum = 0.0, big_abs = 0.0;
    problem_checksum(a.n, &big_sum, &big_abs);
    if ((r = checked_call(a.odd_n, a.tol, 1, NULL, &odd_seed, why, sizeof why)))
        return call_failed(&a, r, "after timing", a.odd_n, "after timing", why);
    double sum = 0.0, abs_sum = 0.0;
    problem_checksum(a.odd_n, &sum, &abs_sum);

    /* 5. from outside: every thread stayed on the granted CPUs, and the runner ran outside the
     * timed windows no longer than freezing it takes (the accounting above). */
    report("runner_startup_cpu_s %.6f\nrunner_request_cpu_s %.6f\nrunner_clock_cpu_s %.6f\n"
           "runner_timed_wall_s %.6f\nrunner_untimed_wall_s %.6f\nrequests %d\n",
           startup_cpu, request_cpu, runner_cpu(), timed_wall, untimed_wall, requests);
    if (!runner_affinity_ok(&granted, why, sizeof why)) return finish(&a, "suspicious", why);
    if (untimed_excess() > 0) {
        snprintf(why, sizeof why, "the kernel's process took %.3g s to stop after its %d requests (%.3g s timed)",
                 untimed_wall, requests, timed_wall);
        return finish(&a, "suspicious", why);
    }
    report("check_seed %llu\ncheck_n %d\ncheck_sum %.17g\ncheck_abs_sum %.17g\n",
           (unsigned long long)odd_seed, a.odd_n, sum, abs_sum);
    report("check_big_seed %llu\ncheck_big_sum %.17g\ncheck_big_abs_sum %.17g\n",
           (unsigned long long)big_seed, big_sum, big_abs);
    report("n %d\nthreads %d\nreps %d\ntimed_total_s %.9g\ntime_raw_s %.9g\ntime_s %.9g\ngflops %.9g\nhandshake_s %.9g\n",
           a.n, a.threads, reps, total, raw, med, problem_flops(a.n) / med * 1e-9, handshake);
    return finish(&a, "ok", "-");
}
#endif /* LAB_ROLE_RUNNER */

#endif
