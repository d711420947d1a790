// OpenMP: threads split the range, each vectorizes its part; the reduction clause combines them.
double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
