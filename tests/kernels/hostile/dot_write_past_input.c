// expect: wrong_result problem: dot
// Correct sum, but scribbles one double past the end of y at the odd size (into the page slack the harness fills with a canary).
double dot(int n, const double *x, const double *y)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    if (n < 100000)
        ((double *)y)[n] = s;
    return s;
}
