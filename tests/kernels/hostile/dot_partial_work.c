// expect: wrong_result problem: dot
// Skips the last 1% of the vectors: the sum misses ~n/100 products, far beyond any summation-order tolerance.
double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    for (int i = 0; i < n - n / 100; i++)
        s += x[i] * y[i];
    return s;
}
