// expect: wrong_result problem: jacobi2d
// Single precision: the 5-term sum in float (errors ~1e-8), far outside the 1e-14 absolute tolerance.
void jacobi2d(int n, const double *u, double *v)
{
    for (int j = 0; j < n; j++) { v[j] = u[j]; v[(n - 1) * n + j] = u[(n - 1) * n + j]; }
    for (int i = 1; i < n - 1; i++) {
        v[i * n] = u[i * n];
        v[i * n + n - 1] = u[i * n + n - 1];
        for (int j = 1; j < n - 1; j++) {
            float s = (float)u[i * n + j] + (float)u[(i - 1) * n + j] + (float)u[(i + 1) * n + j]
                      + (float)u[i * n + j - 1] + (float)u[i * n + j + 1];
            v[i * n + j] = 0.2f * s;
        }
    }
}
