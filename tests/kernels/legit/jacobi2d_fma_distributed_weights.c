// expect: ok problem: jacobi2d
// Another evaluation order: 0.2 distributed over the five terms with fma chains (centre last), border rows by memcpy; within the tolerance.
#include <math.h>
#include <string.h>

void jacobi2d(int n, const double *u, double *v)
{
    const size_t N = (size_t)n;
    memcpy(v, u, N * sizeof *v);
    memcpy(v + (N - 1) * N, u + (N - 1) * N, N * sizeof *v);
    for (size_t i = 1; i + 1 < N; i++) {
        const double *c = u + i * N;
        double *out = v + i * N;
        out[0] = c[0];
        out[N - 1] = c[N - 1];
        for (size_t j = 1; j + 1 < N; j++) {
            double s = 0.2 * c[j + 1];
            s = fma(0.2, c[j - 1], s);
            s = fma(0.2, c[j + N], s);
            s = fma(0.2, c[j - N], s);
            out[j] = fma(0.2, c[j], s);
        }
    }
}
