// expect: ok problem: spmv threads: 2 n: 20000
// Library style: a const CSR view struct and a static row-dot helper, OpenMP over rows with schedule(guided), size_t offsets.
#include <stddef.h>

typedef struct {
    int rows;
    const int *ptr;
    const int *idx;
    const double *data;
} csr_view;

static double csr_row_dot(const csr_view *m, int row, const double *restrict x)
{
    const size_t begin = (size_t)m->ptr[row], end = (size_t)m->ptr[row + 1];
    double even = 0.0, odd = 0.0;
    size_t k = begin;
    for (; k + 2 <= end; k += 2) {
        even += m->data[k] * x[m->idx[k]];
        odd += m->data[k + 1] * x[m->idx[k + 1]];
    }
    if (k < end)
        even += m->data[k] * x[m->idx[k]];
    return even + odd;
}

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    const csr_view m = {n, rowptr, col, val};
    #pragma omp parallel for schedule(guided)
    for (int i = 0; i < m.rows; i++)
        y[i] = csr_row_dot(&m, i, x);
}
