// expect: forbidden problem: dot mode: serial
// The same construct hidden in a macro with _Pragma and a line continuation, in serial mode: the expanded text shows it.
#define PARALLEL_SUM _Pragma("omp parallel for \
reduction(+ : s)")

double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    PARALLEL_SUM
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
