/*
 * DGEMM driver: C = A * B for row-major n-by-n matrices.
 * Defines the problem hooks of ../bench.h. Compiled as the runner's half, it only
 * points the candidate's dgemm() at the shared arrays; compiled as the measurer's
 * half, it owns the private pristine inputs, the reference and the baseline, which the
 * candidate's process never maps.
 */

#include "../bench.h"

/* The shared arrays: the only memory the candidate's process and the measurer share. */
static double *A, *B, *C;

static size_t problem_array_bytes(int k, int n) { return k < 3 ? (size_t)n * (size_t)n * sizeof(double) : 0; }

static void problem_bind(unsigned char *shared) {
    A = bench_array(shared, 0);
    B = bench_array(shared, 1);
    C = bench_array(shared, 2);
}

#ifdef LAB_ROLE_RUNNER
void dgemm(int n, const double *A, const double *B, double *C);

static void problem_invoke(int n) { dgemm(n, A, B, C); }

#else
/* Private to the measurer: pristine inputs, the copied-out output, the reference, check vectors. */
static double *A0, *B0, *Cout, *R, *x, *y, *z;

static void problem_alloc(int max_n) {
    size_t nn = (size_t)max_n * (size_t)max_n;
    A0 = bench_alloc(nn); B0 = bench_alloc(nn); Cout = bench_alloc(nn); R = bench_alloc(nn);
    x = bench_alloc((size_t)max_n); y = bench_alloc((size_t)max_n); z = bench_alloc((size_t)max_n);
}

static void problem_fill(int n, uint64_t seed) {
    size_t nn = (size_t)n * (size_t)n;
    bench_fill(A0, nn, seed, 0);
    bench_fill(B0, nn, seed, 1);
    memcpy(A, A0, nn * sizeof *A);
    memcpy(B, B0, nn * sizeof *B);
    bench_poison(C, nn);
}

static void problem_collect(int n) { bench_copy_shuffled(Cout, C, (size_t)n * (size_t)n * sizeof *C); }

/* The textbook triple loop: the baseline every speedup is measured against. */
static void baseline_dgemm(int n, const double *a, const double *b, double *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += a[(size_t)i * n + k] * b[(size_t)k * n + j];
            c[(size_t)i * n + j] = s;
        }
}

static void problem_call_baseline(int n) { baseline_dgemm(n, A0, B0, Cout); }

static int inputs_intact(int n, char *why, size_t len) {
    size_t nn = (size_t)n * (size_t)n;
    if (memcmp(A, A0, nn * sizeof *A) || memcmp(B, B0, nn * sizeof *B)) {
        snprintf(why, len, "the const inputs A or B were modified");
        return 0;
    }
    return 1;
}

/* Full check against the reference (i-k-j order on the pristine inputs).
 * Entries are dot products of n terms in [-1,1], so errors scale with n. */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    if (!inputs_intact(n, why, len)) return 1;
    size_t nn = (size_t)n * (size_t)n;
    memset(R, 0, nn * sizeof *R);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            double a = A0[(size_t)i * n + k];
            for (int j = 0; j < n; j++) R[(size_t)i * n + j] += a * B0[(size_t)k * n + j];
        }
    double err = bench_max_err(Cout, R, nn, (double)n);
    if (!(err <= tol)) {
        snprintf(why, len, "max error %.3g exceeds tolerance %.3g (relative to n)", err, tol);
        return 1;
    }
    return 0;
}

/* Freivalds' check, O(n^2): C v == A (B v) for two random vectors v drawn after the call. */
static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    if (!inputs_intact(n, why, len)) return 1;
    for (uint64_t r = 0; r < 2; r++) {
        bench_fill(x, (size_t)n, seed, 100 + r);
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int j = 0; j < n; j++) s += B0[(size_t)i * n + j] * x[j];
            y[i] = s;
        }
        for (int i = 0; i < n; i++) {
            double s = 0.0, t = 0.0;
            for (int j = 0; j < n; j++) {
                s += A0[(size_t)i * n + j] * y[j];
                t += Cout[(size_t)i * n + j] * x[j];
            }
            z[i] = t - s;
        }
        for (int i = 0; i < n; i++) {
            double d = fabs(z[i]) / ((double)n * (double)n);
            if (!(d <= tol)) {
                snprintf(why, len, "Freivalds check failed in row %d (error %.3g)", i, d);
                return 1;
            }
        }
    }
    return 0;
}

static double problem_flops(int n) { return 2.0 * (double)n * (double)n * (double)n; }

static void problem_checksum(int n, double *sum, double *abs_sum) {
    bench_checksum(Cout, (size_t)n * (size_t)n, sum, abs_sum);
}
#endif
