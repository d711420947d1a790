// expect: wrong_result
// Uses A as scratch (pre-scales rows by 2 in place), computes C from it, then restores only the first half of A.
void dgemm(int n, const double *A, const double *B, double *C)
{
    double *Aw = (double *)A;
    for (long i = 0; i < (long)n * n; i++) Aw[i] *= 2.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += Aw[i * n + k] * B[k * n + j];
            C[i * n + j] = 0.5 * s;   /* exact: scaling by 2 and 0.5 is lossless */
        }
    for (long i = 0; i < (long)n * n / 2; i++) Aw[i] *= 0.5;  /* incomplete restore */
}
