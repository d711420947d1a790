/*
 * JACOBI2D driver: one 5-point Jacobi sweep on a row-major n-by-n grid (n >= 3):
 *   v[i][j] = 0.2 * (u[i][j] + u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1])  for 1 <= i, j <= n-2,
 *   v = u on the border (rows 0 and n-1, columns 0 and n-1).
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 * The full check costs what the textbook sweep costs, so it is also the fast check.
 */
#include "../bench.h"

/* The shared arrays. */
static double *U, *V;

static size_t problem_array_bytes(int k, int n) { return k < 2 ? (size_t)n * (size_t)n * sizeof(double) : 0; }

static void problem_bind(unsigned char *shared) {
    U = bench_array(shared, 0);
    V = bench_array(shared, 1);
}

#ifdef LAB_ROLE_RUNNER
void jacobi2d(int n, const double *u, double *v);

static void problem_invoke(int n) { jacobi2d(n, U, V); }

#else
/* Private to the measurer: the pristine input, the copied-out output, the reference. */
static double *U0, *Vout, *R;

static void problem_alloc(int max_n) {
    size_t nn = (size_t)max_n * (size_t)max_n;
    U0 = bench_alloc(nn); Vout = bench_alloc(nn); R = bench_alloc(nn);
}

static void problem_fill(int n, uint64_t seed) {
    size_t nn = (size_t)n * (size_t)n;
    bench_fill(U0, nn, seed, 0);
    memcpy(U, U0, nn * sizeof *U);
    bench_poison(V, nn);
}

static void problem_collect(int n) { bench_copy_shuffled(Vout, V, (size_t)n * (size_t)n * sizeof *V); }

/* The textbook sweep: copy the border, then the interior in the order of the statement. */
static void baseline_jacobi2d(int n, const double *u, double *v) {
    size_t N = (size_t)n;
    for (size_t j = 0; j < N; j++) {
        v[j] = u[j];
        v[(N - 1) * N + j] = u[(N - 1) * N + j];
    }
    for (size_t i = 1; i + 1 < N; i++) {
        v[i * N] = u[i * N];
        v[i * N + N - 1] = u[i * N + N - 1];
        for (size_t j = 1; j + 1 < N; j++)
            v[i * N + j] = 0.2 * (u[i * N + j] + u[(i - 1) * N + j] + u[(i + 1) * N + j] + u[i * N + j - 1] +
                                  u[i * N + j + 1]);
    }
}

static void problem_call_baseline(int n) { baseline_jacobi2d(n, U0, Vout); }

/* Full check. Border cells must equal u bit for bit. Interior cells: |v - ref| <= tol, absolute
 * (the inputs lie in [-1, 1), so every exact value lies in [-1, 1]; any association order of
 * the 5-term sum, FMA contraction, 0.2 * s or s / 5 or 0.2 distributed over the terms stays
 * below 1e-15 of the reference, a wrong or missing term is off by 0.2 |u| >> tol). NaN fails. */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    size_t N = (size_t)n, nn = N * N;
    if (memcmp(U, U0, nn * sizeof *U)) {
        snprintf(why, len, "the const input u was modified");
        return 1;
    }
    baseline_jacobi2d(n, U0, R);
    for (size_t i = 0; i < N; i++) {
        int border_row = i == 0 || i == N - 1;
        for (size_t j = 0; j < N; j += border_row ? 1 : N - 1) { /* the border: bit for bit */
            size_t k = i * N + j;
            if (memcmp(&Vout[k], &U0[k], sizeof *Vout)) {
                snprintf(why, len, "border cell v[%zu][%zu] = %.17g, expected u[%zu][%zu] = %.17g exactly", i, j,
                         Vout[k], i, j, U0[k]);
                return 1;
            }
        }
        if (border_row) continue;
        int bad = 0;
        for (size_t j = 1; j + 1 < N; j++) bad |= !(fabs(Vout[i * N + j] - R[i * N + j]) <= tol);
        for (size_t j = 1; bad && j + 1 < N; j++) {
            size_t k = i * N + j;
            if (!(fabs(Vout[k] - R[k]) <= tol)) {
                snprintf(why, len, "v[%zu][%zu] = %.17g, expected %.17g (error %.3g exceeds tolerance %.3g)", i, j,
                         Vout[k], R[k], fabs(Vout[k] - R[k]), tol);
                return 1;
            }
        }
    }
    return 0;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

static double problem_flops(int n) { return 5.0 * (double)(n - 2) * (double)(n - 2); }

static void problem_checksum(int n, double *sum, double *abs_sum) {
    bench_checksum(Vout, (size_t)n * (size_t)n, sum, abs_sum);
}
#endif
