/*
 * bandwidth.c -- this machine's best data rates at working sets that sit in each level of the
 * memory hierarchy, on a given number of threads (one per CPU, each pinned to its own CPU of
 * the process's affinity mask, in order). lab/harness/plausibility.py runs it once per machine
 * and thread count, with every CPU slot held: an `ok` kernel whose call would have had to move
 * its problem's bytes faster than these rates allow (with a margin) is `suspicious`.
 *
 *     bandwidth THREADS LEVEL=BYTES[,nt] ...      e.g.  bandwidth 2 L1=32768 L2=1048576 ...
 *
 * BYTES is the level's working set, all threads together (each thread gets BYTES / THREADS of
 * its own, first touched by itself); Python derives it from the cache sizes in sysfs. Kernels,
 * on explicit vectors of 32 and of 64 bytes (whichever this CPU streams faster):
 *   read      s += a[i] over the thread's array, 8 independent accumulators;
 *   triad     a[i] = b[i] + s * c[i], the array split in three, ordinary stores;
 *   triad_nt  the same with nontemporal stores (levels marked `,nt`: L3 and DRAM).
 * Bytes are compulsory traffic: 8 per element read, 24 per triad element (the read that
 * write-allocate adds to an ordinary store is not counted). Each kernel runs enough repetitions
 * that one trial takes at least MIN_TRIAL_S (each trial after one untimed repetition that brings
 * the array back into its level); the best of TRIALS trials counts, taken in rounds over every
 * kernel and level so that a kernel's trials are spread over the whole run (about 3 s).
 * Prints per level one line per kernel, "LEVEL KERNEL GB/s", then "LEVEL best GB/s".
 */
#define _GNU_SOURCE
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define TRIALS 5
#define MIN_TRIAL_S 0.02
#define MAX_LEVELS 8
/* Elements per unrolled step: 8 vectors of up to 8 doubles; every per-thread array is a multiple. */
#define STEP 64

typedef double v32 __attribute__((vector_size(32), aligned(32)));
typedef double v64 __attribute__((vector_size(64), aligned(64)));

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How a read kernel keeps its first accumulator live across repetitions: in a vector register
 * where the vector fits one ("+x"), else in memory ("+m"; once per repetition, nothing next to
 * the reads): a 64-byte vector fits no register below AVX-512, a 32-byte one none below AVX. */
#if defined(__AVX512F__)
#define KEEP32 "+x"
#define KEEP64 "+x"
#elif defined(__AVX__)
#define KEEP32 "+x"
#define KEEP64 "+m"
#else
#define KEEP32 "+m"
#define KEEP64 "+m"
#endif

#define READ_KERNEL(NAME, V, KEEP)                                                             \
    __attribute__((noinline)) static double NAME(const double *a, long n, long reps) {        \
        enum { L = sizeof(V) / sizeof(double) };                                               \
        V s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0}, s5 = {0}, s6 = {0}, s7 = {0};      \
        for (long r = 0; r < reps; r++) {                                                      \
            for (long i = 0; i < n; i += 8 * L) {                                              \
                const V *p = (const V *)(a + i);                                               \
                s0 += p[0]; s1 += p[1]; s2 += p[2]; s3 += p[3];                                \
                s4 += p[4]; s5 += p[5]; s6 += p[6]; s7 += p[7];                                \
            }                                                                                  \
            __asm__ volatile("" : KEEP(s0) : : "memory"); /* every repetition reads again */   \
        }                                                                                      \
        V s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));                               \
        double t = 0.0;                                                                        \
        for (int l = 0; l < L; l++) t += s[l];                                                 \
        return t;                                                                              \
    }

#define TRIAD_KERNEL(NAME, V)                                                                  \
    __attribute__((noinline)) static double NAME(double *a, const double *b, const double *c, \
                                                 long n, long reps) {                          \
        enum { L = sizeof(V) / sizeof(double) };                                               \
        const double s = 0.5;                                                                  \
        for (long r = 0; r < reps; r++) {                                                      \
            for (long i = 0; i < n; i += 4 * L) {                                              \
                V *pa = (V *)(a + i);                                                          \
                const V *pb = (const V *)(b + i), *pc = (const V *)(c + i);                    \
                pa[0] = pb[0] + s * pc[0]; pa[1] = pb[1] + s * pc[1];                          \
                pa[2] = pb[2] + s * pc[2]; pa[3] = pb[3] + s * pc[3];                          \
            }                                                                                  \
            __asm__ volatile("" : : : "memory");                                               \
        }                                                                                      \
        return a[n - 1];                                                                       \
    }

READ_KERNEL(read32, v32, KEEP32)
READ_KERNEL(read64, v64, KEEP64)
TRIAD_KERNEL(triad32, v32)
TRIAD_KERNEL(triad64, v64)

/* The triad with stores that bypass the caches (no write-allocate read), on the widest vectors. */
__attribute__((noinline)) static double triad_nt(double *a, const double *b, const double *c, long n,
                                                 long reps) {
    for (long r = 0; r < reps; r++) {
        for (long i = 0; i < n; i += 8) {
#if defined(__AVX512F__)
            __m512d v = _mm512_fmadd_pd(_mm512_set1_pd(0.5), _mm512_load_pd(c + i), _mm512_load_pd(b + i));
            _mm512_stream_pd(a + i, v);
#elif defined(__AVX__)
            for (int h = 0; h < 8; h += 4) {
                __m256d v = _mm256_add_pd(_mm256_load_pd(b + i + h),
                                          _mm256_mul_pd(_mm256_set1_pd(0.5), _mm256_load_pd(c + i + h)));
                _mm256_stream_pd(a + i + h, v);
            }
#elif defined(__x86_64__)
            for (int h = 0; h < 8; h += 2) {
                __m128d v = _mm_add_pd(_mm_load_pd(b + i + h), _mm_mul_pd(_mm_set1_pd(0.5), _mm_load_pd(c + i + h)));
                _mm_stream_pd(a + i + h, v);
            }
#else /* no streaming store in portable C: an ordinary triad (the other kernels may beat it) */
            for (int h = 0; h < 8; h++) a[i + h] = b[i + h] + 0.5 * c[i + h];
#endif
        }
#if defined(__x86_64__)
        _mm_sfence();
#endif
        __asm__ volatile("" : : : "memory");
    }
    return a[n - 1];
}

enum { K_READ32, K_READ64, K_TRIAD32, K_TRIAD64, K_TRIAD_NT, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"read32", "read64", "triad32", "triad64", "triad_nt"};

/* Shared between the team: what the master decides or measures between barriers. */
static long g_reps;
static int g_done;
static double g_t0, g_dt, g_sink;

static double run_kernel(int kind, double *buf, long elems, long reps) {
    long third = elems / 3;
    switch (kind) {
        case K_READ32: return read32(buf, elems, reps);
        case K_READ64: return read64(buf, elems, reps);
        case K_TRIAD32: return triad32(buf, buf + third, buf + 2 * third, third, reps);
        case K_TRIAD64: return triad64(buf, buf + third, buf + 2 * third, third, reps);
        default: return triad_nt(buf, buf + third, buf + 2 * third, third, reps);
    }
}

/* Compulsory bytes of one repetition on one thread's array. */
static double kernel_bytes(int kind, long elems) {
    return kind == K_READ32 || kind == K_READ64 ? 8.0 * (double)elems : 24.0 * (double)(elems / 3);
}

/* One timed run of `reps` repetitions on every thread at once, after one untimed repetition
 * that brings the array back into its level: the master's wall time (g_dt) from the barrier
 * that starts all threads to the barrier that waits for the last. Called by every thread. */
static void timed(int kind, double *buf, long elems, long reps) {
    double s = run_kernel(kind, buf, elems, 1);
#pragma omp barrier
#pragma omp master
    g_t0 = now();
#pragma omp barrier
    s += run_kernel(kind, buf, elems, reps);
#pragma omp barrier
#pragma omp master
    {
        g_dt = now() - g_t0;
        g_sink += s;
    }
#pragma omp barrier
}

static double rate_gbs(int kind, long elems, int threads, long reps, double seconds) {
    return kernel_bytes(kind, elems) * (double)threads * (double)reps / seconds * 1e-9;
}

/* The repetitions that make one run of `kind` take at least MIN_TRIAL_S (all threads agree);
 * its last run, which took g_dt, is the kernel's first trial. */
static long find_reps(int kind, double *buf, long elems) {
#pragma omp master
    {
        g_reps = 1;
        g_done = 0;
    }
#pragma omp barrier
    for (;;) {
        timed(kind, buf, elems, g_reps);
#pragma omp master
        {
            if (g_dt >= MIN_TRIAL_S) g_done = 1;
            else {
                double scale = g_dt > 0 ? 1.25 * MIN_TRIAL_S / g_dt : 1024.0;
                g_reps = (long)((double)g_reps * (scale < 2.0 ? 2.0 : scale > 1024.0 ? 1024.0 : scale)) + 1;
            }
        }
#pragma omp barrier
        if (g_done) break;
    }
    long reps = g_reps;
#pragma omp barrier
    return reps;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s THREADS LEVEL=BYTES[,nt] ...\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]);
    int levels = argc - 2;
    if (threads < 1 || levels > MAX_LEVELS) {
        fprintf(stderr, "bandwidth: bad thread count or too many levels\n");
        return 2;
    }
    char names[MAX_LEVELS][32];
    long elems[MAX_LEVELS]; /* per thread, a multiple of 3 * STEP */
    int nt[MAX_LEVELS];
    for (int l = 0; l < levels; l++) {
        const char *eq = strchr(argv[l + 2], '=');
        size_t len = eq ? (size_t)(eq - argv[l + 2]) : 0;
        if (!eq || len == 0 || len >= sizeof names[l]) {
            fprintf(stderr, "bandwidth: bad level %s\n", argv[l + 2]);
            return 2;
        }
        memcpy(names[l], argv[l + 2], len);
        names[l][len] = 0;
        long bytes = atol(eq + 1);
        nt[l] = strstr(eq, ",nt") != NULL;
        long per = bytes / threads / 8 / (3 * STEP) * (3 * STEP);
        elems[l] = per < 3 * STEP ? 3 * STEP : per;
    }

    cpu_set_t mask;
    int cpus[CPU_SETSIZE], ncpu = 0;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &mask)) cpus[ncpu++] = c;

    double best[MAX_LEVELS][K_COUNT];
    memset(best, 0, sizeof best);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(threads)
    {
        int me = omp_get_thread_num();
        if (ncpu > 0) { /* one thread per CPU, in the mask's order */
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpus[me % ncpu], &one);
            sched_setaffinity(0, sizeof one, &one);
        }
        double *buf[MAX_LEVELS];
        for (int l = 0; l < levels; l++) {
            size_t bytes = (size_t)elems[l] * sizeof(double);
            size_t align = bytes >= (4u << 20) ? (2u << 20) : 4096;
            if (posix_memalign((void **)&buf[l], align, bytes) != 0) {
                fprintf(stderr, "bandwidth: out of memory at %s\n", names[l]);
                exit(1);
            }
            if (align > 4096) madvise(buf[l], bytes, MADV_HUGEPAGE);
            /* First touch by the thread that uses it: pages local to its CPU. */
            for (long i = 0; i < elems[l]; i++) buf[l][i] = 1.0 + (double)(i & 7);
        }
        long reps[MAX_LEVELS][K_COUNT];
        for (int l = 0; l < levels; l++)
            for (int k = 0; k < K_COUNT; k++) {
                reps[l][k] = k == K_TRIAD_NT && !nt[l] ? 0 : find_reps(k, buf[l], elems[l]);
#pragma omp master
                if (reps[l][k]) best[l][k] = rate_gbs(k, elems[l], threads, reps[l][k], g_dt); /* trial 1 */
            }
        /* The other trials in rounds: each runs every kernel at every level once, so that a
         * kernel's trials are spread over the whole calibration, not bunched into one moment that
         * a neighbour (another virtual machine on the same memory) may happen to slow down. */
        for (int trial = 1; trial < TRIALS; trial++)
            for (int l = 0; l < levels; l++)
                for (int k = 0; k < K_COUNT; k++) {
                    if (!reps[l][k]) continue;
                    timed(k, buf[l], elems[l], reps[l][k]);
#pragma omp master
                    {
                        double rate = rate_gbs(k, elems[l], threads, reps[l][k], g_dt);
                        if (rate > best[l][k]) best[l][k] = rate;
                    }
                }
        for (int l = 0; l < levels; l++) free(buf[l]);
    }
    for (int l = 0; l < levels; l++) {
        double top = 0.0;
        for (int k = 0; k < K_COUNT; k++) {
            if (best[l][k] <= 0.0) continue;
            printf("%s %s %.3f\n", names[l], KERNEL_NAMES[k], best[l][k]);
            if (best[l][k] > top) top = best[l][k];
        }
        printf("%s best %.3f\n", names[l], top);
    }
    printf("sink %g\n", g_sink);
    return 0;
}
