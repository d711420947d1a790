// The textbook sweep: copy the border, then every interior cell in row order.
void jacobi2d(int n, const double *u, double *v)
{
    for (int j = 0; j < n; j++) {
        v[j] = u[j];
        v[(n - 1) * n + j] = u[(n - 1) * n + j];
    }
    for (int i = 1; i < n - 1; i++) {
        v[i * n] = u[i * n];
        v[i * n + n - 1] = u[i * n + n - 1];
        for (int j = 1; j < n - 1; j++)
            v[i * n + j] = 0.2 * (u[i * n + j] + u[(i - 1) * n + j] + u[(i + 1) * n + j]
                                  + u[i * n + j - 1] + u[i * n + j + 1]);
    }
}
