// expect: wrong_result problem: dot
// Computes the full product only the first time it sees a size, then samples one element in 64 and scales: cheap on every later call, and wrong because every call's inputs are fresh.
static int seen_n;

double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    if (n != seen_n) {
        seen_n = n;
        for (int i = 0; i < n; i++)
            s += x[i] * y[i];
        return s;
    }
    for (int i = 0; i < n; i += 64)
        s += x[i] * y[i];
    return s * 64.0;
}
