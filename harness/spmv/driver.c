/*
 * SPMV driver: y = A * x for an n-by-n sparse A in CSR form (rowptr, col, val).
 * Defines the problem hooks of ../bench.h (see harness/dgemm/driver.c for the two halves).
 *
 * The matrix (structure and values) and x are drawn afresh from the seed for every call,
 * by spmv_generate() below, mirrored bit for bit by make_inputs() in reference.py:
 *
 *   - nonzeros: exactly 16 n (for n >= 32). Rows come in pairs (2p, 2p+1) with 16 + d and
 *     16 - d nonzeros, d uniform in [-16, 16] (draw p of stream 0, d = z mod 33 - 16): row
 *     lengths vary from 0 (empty rows, about 1 row in 33) to 32. With n odd, the last row
 *     has 16. Below n = 32 a row's length is capped at n (then fewer than 16 n nonzeros).
 *   - columns: each row is banded or spread (bit 32 + (i & 1) of the same draw, 1 = banded).
 *     A banded row picks its columns in the window of w = min(128, n) columns around the
 *     diagonal, [clamp(i - 64, 0, n - w), + w); a spread row in all of [0, n). The window
 *     is cut into c equal buckets (bucket b = [lo + b*w/c, lo + (b+1)*w/c)) and the row's
 *     b-th column is drawn uniformly inside bucket b (draw k of stream 1, k = the nonzero's
 *     index): columns distinct and ascending, x read partly near the diagonal, partly at
 *     random.
 *   - val: bench_fill stream 2 (16 n doubles in [-1, 1), the entries past rowptr[n], if
 *     any, 0); x: bench_fill stream 3.
 *
 * Check, on every call (O(nnz) like the kernel, so the full check is also the fast one):
 * the four inputs byte for byte against the private pristine copies, then every row:
 * |y_i - ref_i| <= tol * sum_k |val_k * x[col_k]| over row i, ref_i summed in row order
 * (an empty row must give exactly 0).
 */
#include "../bench.h"

#define SPMV_PER_ROW 16 /* average nonzeros per row: nnz = 16 n */
#define SPMV_BAND 128   /* width of a banded row's column window */

static size_t spmv_cap(int n) { return (size_t)SPMV_PER_ROW * (size_t)n; } /* nonzeros at size n */

/* The shared arrays, in the signature's order: rowptr, col, val, x, then the output y. */
static int32_t *RP, *CL;
static double *V, *X, *Y;

static size_t problem_array_bytes(int k, int n) {
    switch (k) {
    case 0: return ((size_t)n + 1) * sizeof(int32_t);
    case 1: return spmv_cap(n) * sizeof(int32_t);
    case 2: return spmv_cap(n) * sizeof(double);
    case 3: case 4: return (size_t)n * sizeof(double);
    default: return 0;
    }
}

static void problem_bind(unsigned char *shared) {
    RP = bench_array(shared, 0);
    CL = bench_array(shared, 1);
    V = bench_array(shared, 2);
    X = bench_array(shared, 3);
    Y = bench_array(shared, 4);
}

#ifdef LAB_ROLE_RUNNER
void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y);

static void problem_invoke(int n) { spmv(n, RP, CL, V, X, Y); }

#else
/* Private to the measurer: pristine inputs, the copied-out output. */
static int32_t *RP0, *CL0;
static double *V0, *X0, *Yout;

static void problem_alloc(int max_n) {
    RP0 = bench_alloc_bytes(((size_t)max_n + 1) * sizeof(int32_t));
    CL0 = bench_alloc_bytes(spmv_cap(max_n) * sizeof(int32_t));
    V0 = bench_alloc(spmv_cap(max_n));
    X0 = bench_alloc((size_t)max_n);
    Yout = bench_alloc((size_t)max_n);
}

/* The matrix and x of (seed, n); see the top of this file. Mirrored by reference.py. */
static void spmv_generate(int n, uint64_t seed, int32_t *rp, int32_t *cl, double *v, double *x) {
    bench_key k0 = bench_stream_key(seed, 0), k1 = bench_stream_key(seed, 1);
    int64_t w = n < SPMV_BAND ? n : SPMV_BAND;
    size_t cap = spmv_cap(n);
    rp[0] = 0;
    for (int i = 0; i < n; i++) {
        uint64_t z = bench_draw(&k0, (size_t)(i / 2));
        int64_t d = (int64_t)(z % 33) - 16;
        int64_t c = (i | 1) >= n ? SPMV_PER_ROW : (i & 1) ? SPMV_PER_ROW - d : SPMV_PER_ROW + d;
        if (c > n) c = n;
        int64_t lo = 0, span = n;
        if ((z >> (32 + (i & 1))) & 1) { /* banded */
            lo = i - SPMV_BAND / 2;
            if (lo > n - w) lo = n - w;
            if (lo < 0) lo = 0;
            span = w;
        }
        int64_t start = rp[i];
        for (int64_t b = 0; b < c; b++) {
            int64_t a = lo + b * span / c, e = lo + (b + 1) * span / c;
            cl[start + b] = (int32_t)(a + (int64_t)(bench_draw(&k1, (size_t)(start + b)) % (uint64_t)(e - a)));
        }
        rp[i + 1] = (int32_t)(start + c);
    }
    size_t nnz = (size_t)rp[n];
    memset(cl + nnz, 0, (cap - nnz) * sizeof *cl);
    bench_fill(v, cap, seed, 2);
    for (size_t k = nnz; k < cap; k++) v[k] = 0.0;
    bench_fill(x, (size_t)n, seed, 3);
}

static void problem_fill(int n, uint64_t seed) {
    spmv_generate(n, seed, RP0, CL0, V0, X0);
    memcpy(RP, RP0, problem_array_bytes(0, n));
    memcpy(CL, CL0, problem_array_bytes(1, n));
    memcpy(V, V0, problem_array_bytes(2, n));
    memcpy(X, X0, problem_array_bytes(3, n));
    bench_poison(Y, (size_t)n);
}

static void problem_collect(int n) { bench_copy_shuffled(Yout, Y, (size_t)n * sizeof *Y); }

/* The textbook CSR loop. */
static void baseline_spmv(int n, const int32_t *rp, const int32_t *cl, const double *v, const double *x, double *y) {
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = rp[i]; k < rp[i + 1]; k++) s += v[k] * x[cl[k]];
        y[i] = s;
    }
}

static void problem_call_baseline(int n) { baseline_spmv(n, RP0, CL0, V0, X0, Yout); }

/* Full check; O(nnz) like the kernel itself, so it also serves as the fast check. */
static int problem_check_full(int n, double tol, char *why, size_t len) {
    static const char *names[4] = {"rowptr", "col", "val", "x"};
    const void *pristine[4] = {RP0, CL0, V0, X0}, *shared[4] = {RP, CL, V, X};
    for (int k = 0; k < 4; k++)
        if (memcmp(shared[k], pristine[k], problem_array_bytes(k, n))) {
            snprintf(why, len, "the const input %s was modified", names[k]);
            return 1;
        }
    for (int i = 0; i < n; i++) {
        double s = 0.0, mag = 0.0;
        for (int k = RP0[i]; k < RP0[i + 1]; k++) {
            double p = V0[k] * X0[CL0[k]];
            s += p;
            mag += fabs(p);
        }
        double err = fabs(Yout[i] - s);
        if (!(err <= tol * mag)) {
            snprintf(why, len, "y[%d] = %.17g, expected %.17g (row of %d nonzeros; error %.3g of its sum |a*x| = %.3g)",
                     i, Yout[i], s, RP0[i + 1] - RP0[i], err, mag);
            return 1;
        }
    }
    return 0;
}

static int problem_check_fast(int n, double tol, uint64_t seed, char *why, size_t len) {
    (void)seed;
    return problem_check_full(n, tol, why, len);
}

static double problem_flops(int n) { return 2.0 * (double)spmv_cap(n); }

static void problem_checksum(int n, double *sum, double *abs_sum) { bench_checksum(Yout, (size_t)n, sum, abs_sum); }
#endif
