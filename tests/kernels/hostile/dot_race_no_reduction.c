// expect: wrong_result problem: dot threads: 2 n: 2000000
// OpenMP without a reduction clause: both threads add into one shared variable, so updates are lost (on 2 threads and 2M elements, in every call).
double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
#pragma omp parallel for
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
