// expect: wrong_result problem: spmv threads: 2 n: 200000
// Data race: a hand-rolled work queue, a plain shared row counter taken with next++ (not atomic), and y[i] += after a memset. gcc keeps the counter in a register, so each thread walks every row from the one it took and both add into the same y[i]; rows come out doubled (n: 200000 makes the threads overlap on every call).
#include <string.h>

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    int next = 0;
    memset(y, 0, (size_t)n * sizeof *y);
    #pragma omp parallel shared(next)
    {
        int i;
        while ((i = next++) < n) {
            double s = 0.0;
            for (int k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[col[k]];
            y[i] += s;
        }
    }
}
