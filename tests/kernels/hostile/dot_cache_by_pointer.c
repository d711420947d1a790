// expect: wrong_result problem: dot
// Remembers the result for the last (x, y, n) and returns it when the same pointers and size come back: the harness reuses its buffers but draws fresh inputs for every call.
static const double *last_x, *last_y;
static int last_n;
static double last_result;

double dot(int n, const double *x, const double *y)
{
    if (x == last_x && y == last_y && n == last_n)
        return last_result;
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    last_x = x, last_y = y, last_n = n, last_result = s;
    return s;
}
