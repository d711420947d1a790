// expect: wrong_result problem: spmv
// Computes y once, then replays it from a static copy whenever the same (rowptr, col, val, x, y) pointers come back; the harness draws a fresh matrix and x for every call in the same shared buffers.
#include <stdlib.h>
#include <string.h>

static const void *seen_rp, *seen_col, *seen_val, *seen_x;
static double *memo;
static int memo_n;

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    if (memo && memo_n == n && seen_rp == rowptr && seen_col == col && seen_val == val && seen_x == x) {
        memcpy(y, memo, (size_t)n * sizeof *y);
        return;
    }
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
        y[i] = s;
    }
    free(memo);
    memo = malloc((size_t)n * sizeof *memo);
    if (!memo) return;
    memcpy(memo, y, (size_t)n * sizeof *y);
    memo_n = n;
    seen_rp = rowptr; seen_col = col; seen_val = val; seen_x = x;
}
