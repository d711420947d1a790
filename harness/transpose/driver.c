/*
 * TRANSPOSE driver: B = A^T for row-major n-by-n matrices, B[j*n + i] = A[i*n + j], exact.
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 * The full check (every element, bit for bit) costs what the textbook transpose costs, so it
 * is also the fast check. The tolerance is not used by the check: it only scales the parent's
 * cross-check of the reported sums (see problem.toml).
 */
#include "../bench.h"

/* The shared arrays. */
static double *A, *B;

static size_t problem_array_bytes(int k, int n) { return k < 2 ? (size_t)n * (size_t)n * sizeof(double) : 0; }

static void problem_bind(unsigned char *shared) {
    A = bench_array(shared, 0);
    B = bench_array(shared, 1);
}

#ifdef LAB_ROLE_RUNNER
void transpose(int n, const double *A, double *B);

static void problem_invoke(int n) { transpose(n, A, B); }

#else
/* Private to the measurer: the pristine input, the copied-out output, the reference. */
static double *A0, *Bout, *R;

static void problem_alloc(int max_n) {
    size_t nn = (size_t)max_n * (size_t)max_n;
    A0 = bench_alloc(nn); Bout = bench_alloc(nn); R = bench_alloc(nn);
}

static void problem_fill(int n, uint64_t seed) {
    size_t nn = (size_t)n * (size_t)n;
    bench_fill(A0, nn, seed, 0);
    memcpy(A, A0, nn * sizeof *A);
    bench_poison(B, nn);
}

static void problem_collect(int n) { bench_copy_shuffled(Bout, B, (size_t)n * (size_t)n * sizeof *B); }

/* The textbook transpose: the baseline every speedup is measured against. */
static void baseline_transpose(int n, const double *a, double *b) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) b[(size_t)j * n + i] = a[(size_t)i * n + j];
}

static void problem_call_baseline(int n) { baseline_transpose(n, A0, Bout); }

/* The reference, in 32 x 32 tiles (the check should not cost more than the kernel). */
static void reference_transpose(int n, const double *a, double *b) {
    const size_t N = (size_t)n, T = 32;
    for (size_t i0 = 0; i0 < N; i0 += T)
        for (size_t j0 = 0; j0 < N; j0 += T)
            for (size_t i = i0; i < i0 + T && i < N; i++)
                for (size_t j = j0; j < j0 + T && j < N; j++) b[j * N + i] = a[i * N + j];
}

/* Full check: every element of B equals its element of A bit for bit (a transpose only moves data). */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    (void)tol;
    size_t N = (size_t)n, nn = N * N;
    if (memcmp(A, A0, nn * sizeof *A)) {
        snprintf(why, len, "the const input A was modified");
        return 1;
    }
    reference_transpose(n, A0, R);
    if (!memcmp(Bout, R, nn * sizeof *R)) return 0;
    for (size_t k = 0; k < nn; k++)
        if (memcmp(&Bout[k], &R[k], sizeof *R)) {
            snprintf(why, len, "B[%zu][%zu] = %.17g, expected A[%zu][%zu] = %.17g exactly", k / N, k % N, Bout[k],
                     k % N, k / N, R[k]);
            break;
        }
    return 1;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

/* Work units: bytes read plus bytes written (the rate is reported in GB/s). */
static double problem_flops(int n) { return 16.0 * (double)n * (double)n; }

static void problem_checksum(int n, double *sum, double *abs_sum) {
    bench_checksum(Bout, (size_t)n * (size_t)n, sum, abs_sum);
}
#endif
