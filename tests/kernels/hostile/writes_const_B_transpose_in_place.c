// expect: wrong_result
// Casts away const and transposes B in place for unit-stride access; C is correct but B is left transposed.
void dgemm(int n, const double *A, const double *B, double *C)
{
    double *Bw = (double *)B;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double t = Bw[i * n + j];
            Bw[i * n + j] = Bw[j * n + i];
            Bw[j * n + i] = t;
        }
    /* now Bw[j*n + k] == original B[k][j] */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * Bw[j * n + k];
            C[i * n + j] = s;
        }
    /* "forgot" to transpose back */
}
