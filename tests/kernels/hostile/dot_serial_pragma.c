// expect: forbidden problem: dot mode: serial
// A plain OpenMP reduction submitted in serial mode: any OpenMP construct is forbidden there.
double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
