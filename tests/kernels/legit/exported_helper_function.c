// expect: ok
// A non-static helper (an ordinary C habit): the build localizes it, so it is exported to no one.
double dot_strided(int n, const double *a, const double *b, int stride)
{
    double s = 0.0;
    for (int k = 0; k < n; k++) s += a[k] * b[(long)k * stride];
    return s;
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            C[i * n + j] = dot_strided(n, A + i * n, B + j, n);
}
