/*
 * bench.h -- the measurement core shared by every problem's driver.
 *
 * A problem's driver.c includes this header first and then defines the problem
 * hooks declared below; this header supplies main(): argument
 * parsing, deterministic input generation, the check/timing protocol and the
 * report.  The candidate kernel is a separate translation unit and never sees
 * this file; everything here is `static`, so the linked binary exports nothing
 * a candidate could bind to by name.
 *
 * Protocol (the parent process relies on it; see lab/sandbox.py, lab/evaluate.py):
 *   1. odd size: two calls on fresh inputs, each fully checked against the
 *      reference computed from pristine copies of the inputs;
 *   2. timed size: one checked warm-up call, then timed calls on fresh inputs
 *      (regenerated outside the timer) until min_time and min_reps are met;
 *      every timed call gets the problem's fast check (e.g. Freivalds);
 *   3. after timing: fresh inputs at both sizes, fully checked again;
 *   4. the serial textbook baseline is timed the same way in this binary.
 * Results are written once, at the end, as "key value" lines on the file
 * descriptor given by --result-fd (never stdout). They include checksums of the
 * last output at both sizes, which the parent recomputes from the seeds.
 */
#ifndef LAB_BENCH_H
#define LAB_BENCH_H

#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <omp.h>

/* ---- deterministic inputs: counter-based splitmix64, mirrored in lab/problems.py ---- */

static uint64_t bench_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Stream key of input array `stream` for run seed `seed`. */
static uint64_t bench_stream_key(uint64_t seed, uint64_t stream) {
    return bench_mix(seed * 0x9E3779B97F4A7C15ULL + stream + 1);
}

/* x[i] = uniform double in [-1, 1), a pure function of (seed, stream, i). */
static void bench_fill(double *x, size_t count, uint64_t seed, uint64_t stream) {
    uint64_t key = bench_stream_key(seed, stream);
    for (size_t i = 0; i < count; i++) {
        uint64_t z = bench_mix(key + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL);
        x[i] = (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
}

/* Poison an output buffer so that code which skips elements is caught. */
static void bench_poison(double *x, size_t count) {
    for (size_t i = 0; i < count; i++) x[i] = NAN;
}

static void *bench_alloc(size_t count) {
    void *p = aligned_alloc(64, ((count * sizeof(double) + 63) / 64) * 64 + 64);
    if (!p) { fprintf(stderr, "bench: out of memory\n"); exit(3); }
    return p;
}

static double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Largest |got - want| relative to `scale`; NaN/Inf in `got` counts as infinite. */
static double bench_max_err(const double *got, const double *want, size_t count, double scale) {
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        double d = fabs(got[i] - want[i]) / scale;
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

/* ---- problem hooks: declared here, defined by the problem's driver.c ---- */
static void problem_alloc(int max_n);
static void problem_fill(int n, uint64_t seed);       /* inputs + pristine copies; poison outputs */
static void problem_call(int n);                      /* the candidate */
static void problem_call_baseline(int n);             /* textbook serial version */
static int problem_check_full(int n, double tol, char *why, size_t len);                 /* 0 = ok */
static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len);  /* 0 = ok */
static double problem_flops(int n);
static void problem_checksum(int n, double *sum, double *abs_sum);                       /* outputs */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int k) {
    qsort(t, (size_t)k, sizeof(double), cmp_double);
    return k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
}

typedef struct {
    int n, odd_n, threads, min_reps, max_reps, result_fd, baseline;
    double min_time_s, baseline_min_time_s, tol;
    uint64_t seed;
    const char *nonce;
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

/* One write(2) of the whole report, so the parent sees all of it or none. */
static int finish(const bench_args *a, const char *status, const char *detail) {
    char head[512];
    int w = snprintf(head, sizeof head, "nonce %s\nstatus %s\ndetail %s\n", a->nonce, status, detail);
    char out[sizeof head + sizeof bench_report];
    memcpy(out, head, (size_t)w);
    memcpy(out + w, bench_report, bench_report_len);
    size_t len = (size_t)w + bench_report_len;
    ssize_t done = write(a->result_fd, out, len);
    return done == (ssize_t)len ? 0 : 4;
}

/* Time `call` on fresh inputs per repetition; returns reps, fills times. */
typedef void (*bench_fn)(int);
static int bench_time(const bench_args *a, bench_fn call, int n, double min_time, uint64_t seed0,
                      int check, double *times, char *why, size_t len, int *failed) {
    double total = 0.0;
    int reps = 0;
    *failed = 0;
    while ((total < min_time || reps < a->min_reps) && reps < a->max_reps) {
        uint64_t seed = seed0 + (uint64_t)reps;
        problem_fill(n, seed);                 /* outside the timer */
        double t0 = bench_now();
        call(n);
        double t1 = bench_now();
        times[reps++] = t1 - t0;
        total += t1 - t0;
        if (check && problem_check_fast(n, a->tol, seed, why, len)) {
            *failed = 1;
            return reps;
        }
    }
    return reps;
}

static int parse_args(int argc, char **argv, bench_args *a) {
    *a = (bench_args){.n = 256, .odd_n = 77, .threads = 1, .min_reps = 5, .max_reps = 100000,
                      .result_fd = 3, .baseline = 1, .min_time_s = 0.2,
                      .baseline_min_time_s = 0.1, .tol = 1e-10, .seed = 1, .nonce = "-"};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--n")) a->n = atoi(v);
        else if (!strcmp(k, "--odd-n")) a->odd_n = atoi(v);
        else if (!strcmp(k, "--threads")) a->threads = atoi(v);
        else if (!strcmp(k, "--min-reps")) a->min_reps = atoi(v);
        else if (!strcmp(k, "--max-reps")) a->max_reps = atoi(v);
        else if (!strcmp(k, "--result-fd")) a->result_fd = atoi(v);
        else if (!strcmp(k, "--baseline")) a->baseline = atoi(v);
        else if (!strcmp(k, "--min-time")) a->min_time_s = atof(v);
        else if (!strcmp(k, "--baseline-min-time")) a->baseline_min_time_s = atof(v);
        else if (!strcmp(k, "--tol")) a->tol = atof(v);
        else if (!strcmp(k, "--seed")) a->seed = strtoull(v, NULL, 10);
        else if (!strcmp(k, "--nonce")) a->nonce = v;
        else { fprintf(stderr, "bench: unknown option %s\n", k); return 2; }
    }
    if (a->n < 1 || a->odd_n < 1 || a->threads < 1 || a->min_reps < 1 || a->max_reps < a->min_reps) {
        fprintf(stderr, "bench: bad sizes or counts\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    bench_args a;
    if (parse_args(argc, argv, &a)) return 2;
    omp_set_num_threads(a.threads);
    int max_n = a.n > a.odd_n ? a.n : a.odd_n;
    problem_alloc(max_n);
    double *times = bench_alloc((size_t)a.max_reps);
    char why[256] = "";
    char detail[320];

    /* Seeds: each phase draws from its own range so no two calls see the same inputs. */
    uint64_t s = a.seed * 1000003ULL;

    /* 1. odd size, twice: code correct only at some sizes, or only on a first call, fails here. */
    for (int k = 0; k < 2; k++) {
        problem_fill(a.odd_n, s + 1 + (uint64_t)k);
        problem_call(a.odd_n);
        if (problem_check_full(a.odd_n, a.tol, why, sizeof why)) {
            snprintf(detail, sizeof detail, "n=%d call %d: %s", a.odd_n, k + 1, why);
            return finish(&a, "wrong_result", detail);
        }
    }
    /* 2. timed size: a checked warm-up call, then the timed loop (fast check on every call). */
    problem_fill(a.n, s + 3);
    problem_call(a.n);
    if (problem_check_full(a.n, a.tol, why, sizeof why)) {
        snprintf(detail, sizeof detail, "n=%d warm-up call: %s", a.n, why);
        return finish(&a, "wrong_result", detail);
    }
    int failed = 0;
    int reps = bench_time(&a, problem_call, a.n, a.min_time_s, s + 1000, 1, times, why, sizeof why, &failed);
    if (failed) {
        snprintf(detail, sizeof detail, "n=%d timed call %d: %s", a.n, reps, why);
        return finish(&a, "wrong_result", detail);
    }
    double total = 0.0;
    for (int i = 0; i < reps; i++) total += times[i];
    double med = median(times, reps);
    /* 3. after timing: fresh inputs, full checks at both sizes (catches caching and decay). */
    problem_fill(a.n, s + 5);
    problem_call(a.n);
    if (problem_check_full(a.n, a.tol, why, sizeof why)) {
        snprintf(detail, sizeof detail, "n=%d after timing: %s", a.n, why);
        return finish(&a, "wrong_result", detail);
    }
    double big_sum = 0.0, big_abs = 0.0;
    problem_checksum(a.n, &big_sum, &big_abs);
    problem_fill(a.odd_n, s + 6);
    problem_call(a.odd_n);
    if (problem_check_full(a.odd_n, a.tol, why, sizeof why)) {
        snprintf(detail, sizeof detail, "n=%d after timing: %s", a.odd_n, why);
        return finish(&a, "wrong_result", detail);
    }
    double sum = 0.0, abs_sum = 0.0;
    problem_checksum(a.odd_n, &sum, &abs_sum);
    report("check_seed %llu\ncheck_n %d\ncheck_sum %.17g\ncheck_abs_sum %.17g\n",
           (unsigned long long)(s + 6), a.odd_n, sum, abs_sum);
    report("check_big_seed %llu\ncheck_big_sum %.17g\ncheck_big_abs_sum %.17g\n",
           (unsigned long long)(s + 5), big_sum, big_abs);
    report("n %d\nthreads %d\nreps %d\ntimed_total_s %.9g\ntime_s %.9g\ngflops %.9g\n", a.n,
           a.threads, reps, total, med, problem_flops(a.n) / med * 1e-9);

    /* 4. the textbook serial baseline, timed the same way in this binary. */
    if (a.baseline) {
        omp_set_num_threads(1);
        int breps = bench_time(&a, problem_call_baseline, a.n, a.baseline_min_time_s, s + 500000, 0,
                               times, why, sizeof why, &failed);
        double bmed = median(times, breps);
        report("baseline_reps %d\nbaseline_time_s %.9g\nbaseline_gflops %.9g\n", breps, bmed,
               problem_flops(a.n) / bmed * 1e-9);
    }
    return finish(&a, "ok", "-");
}

#endif
