// expect: wrong_result problem: jacobi2d
// Sweeps the interior only and never writes the border, assuming v still holds u's border from an earlier sweep (v arrives poisoned).
void jacobi2d(int n, const double *u, double *v)
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
}
