// expect: forbidden problem: dot mode: serial
// No pragma, but a call into the OpenMP runtime (declared by hand, no omp.h) in serial mode: the object's reference to omp_get_max_threads gives it away.
int omp_get_max_threads(void);

double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    int t = omp_get_max_threads();
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s * (t > 0 ? 1.0 : 0.0);
}
