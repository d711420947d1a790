// expect: ok
// ikj loop order: zero each row of C, then stream rows of B (int loop counters, commented).
void dgemm(int n, const double *A, const double *B, double *C)
{
    /* one row of C at a time */
    for (int i = 0; i < n; i++) {
        double *c = C + (long)i * n;      /* row i of C */
        const double *a = A + (long)i * n; /* row i of A */

        /* C arrives full of garbage: clear the row before accumulating */
        for (int j = 0; j < n; j++)
            c[j] = 0.0;

        /* c[:] += a[k] * B[k, :] -- unit stride over B and C, vectorizes well */
        for (int k = 0; k < n; k++) {
            const double aik = a[k];
            const double *b = B + (long)k * n;
            for (int j = 0; j < n; j++)
                c[j] += aik * b[j];
        }
    }
}
