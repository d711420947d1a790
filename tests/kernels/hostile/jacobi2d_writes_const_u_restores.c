// expect: wrong_result problem: jacobi2d
// Uses the const input as scratch: pre-scales u by 0.2 in place, sums the scaled values, and writes u back by multiplying by 5 (not bit-exact).
void jacobi2d(int n, const double *u, double *v)
{
    double *w = (double *)u;
    const long nn = (long)n * n;
    for (long k = 0; k < nn; k++) w[k] *= 0.2;
    for (int j = 0; j < n; j++) { v[j] = 5.0 * w[j]; v[(n - 1) * n + j] = 5.0 * w[(n - 1) * n + j]; }
    for (int i = 1; i < n - 1; i++) {
        v[i * n] = 5.0 * w[i * n];
        v[i * n + n - 1] = 5.0 * w[i * n + n - 1];
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = w[i * n + j] + w[(i - 1) * n + j] + w[(i + 1) * n + j] + w[i * n + j - 1] + w[i * n + j + 1];
    }
    for (long k = 0; k < nn; k++) w[k] *= 5.0;
}
