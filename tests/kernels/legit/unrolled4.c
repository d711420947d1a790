// expect: ok
// Manually unrolled: 4 rows of C per pass and j unrolled by 4, with scalar remainder loops.
void dgemm(int n, const double *A, const double *B, double *C)
{
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        double *c0 = C + (long)(i + 0) * n, *c1 = C + (long)(i + 1) * n;
        double *c2 = C + (long)(i + 2) * n, *c3 = C + (long)(i + 3) * n;
        for (int j = 0; j < n; j++) { c0[j] = 0.0; c1[j] = 0.0; c2[j] = 0.0; c3[j] = 0.0; }
        for (int k = 0; k < n; k++) {
            const double a0 = A[(long)(i + 0) * n + k], a1 = A[(long)(i + 1) * n + k];
            const double a2 = A[(long)(i + 2) * n + k], a3 = A[(long)(i + 3) * n + k];
            const double *b = B + (long)k * n;
            int j = 0;
            for (; j + 4 <= n; j += 4) {
                double b0 = b[j], b1 = b[j + 1], b2 = b[j + 2], b3 = b[j + 3];
                c0[j] += a0 * b0; c0[j + 1] += a0 * b1; c0[j + 2] += a0 * b2; c0[j + 3] += a0 * b3;
                c1[j] += a1 * b0; c1[j + 1] += a1 * b1; c1[j + 2] += a1 * b2; c1[j + 3] += a1 * b3;
                c2[j] += a2 * b0; c2[j + 1] += a2 * b1; c2[j + 2] += a2 * b2; c2[j + 3] += a2 * b3;
                c3[j] += a3 * b0; c3[j + 1] += a3 * b1; c3[j + 2] += a3 * b2; c3[j + 3] += a3 * b3;
            }
            for (; j < n; j++) {
                c0[j] += a0 * b[j]; c1[j] += a1 * b[j];
                c2[j] += a2 * b[j]; c3[j] += a3 * b[j];
            }
        }
    }
    /* leftover rows (n % 4) */
    for (; i < n; i++) {
        double *c = C + (long)i * n;
        for (int j = 0; j < n; j++) c[j] = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(long)i * n + k];
            const double *b = B + (long)k * n;
            for (int j = 0; j < n; j++) c[j] += a * b[j];
        }
    }
}
