// Scalar, no OpenMP: each row unrolled by 4 with four independent accumulators (four gathers of x in flight), then its 0-3 leftover nonzeros.
void spmv(int n, const int *restrict rowptr, const int *restrict col, const double *restrict val,
          const double *restrict x, double *restrict y)
{
    int k = rowptr[0];
    for (int i = 0; i < n; i++) {
        const int end = rowptr[i + 1];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (; k + 4 <= end; k += 4) {
            s0 += val[k] * x[col[k]];
            s1 += val[k + 1] * x[col[k + 1]];
            s2 += val[k + 2] * x[col[k + 2]];
            s3 += val[k + 3] * x[col[k + 3]];
        }
        for (; k < end; k++)
            s0 += val[k] * x[col[k]];
        y[i] = (s0 + s1) + (s2 + s3);
    }
}
