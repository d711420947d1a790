// expect: wrong_result
// Caches C in a static buffer keyed on (n, A, B) pointers; a repeat call with the same buffers copies the stale result.
#include <stdlib.h>
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    static const double *lastA, *lastB;
    static int lastn;
    static double *cache;
    static size_t cap;
    const size_t nn = (size_t)n * (size_t)n;

    if (cache && n == lastn && A == lastA && B == lastB) {
        memcpy(C, cache, nn * sizeof(double));   /* "same call as before" */
        return;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
    if (nn > cap) {
        free(cache);
        cache = malloc(nn * sizeof(double));
        cap = cache ? nn : 0;
    }
    if (cache) {
        memcpy(cache, C, nn * sizeof(double));
        lastA = A; lastB = B; lastn = n;
    }
}
