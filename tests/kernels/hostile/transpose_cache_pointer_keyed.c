// expect: wrong_result problem: transpose
// Caches B in a static buffer keyed on (n, A, B) pointers; a repeat call on the same buffers copies the stale transpose although A holds fresh values.
#include <stdlib.h>
#include <string.h>

void transpose(int n, const double *A, double *B)
{
    static const double *last_a;
    static double *last_b, *cache;
    static int last_n;
    const size_t nn = (size_t)n * (size_t)n;
    if (cache && n == last_n && A == last_a && B == last_b) {
        memcpy(B, cache, nn * sizeof(double));
        return;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) B[j * n + i] = A[i * n + j];
    free(cache);
    cache = malloc(nn * sizeof(double));
    if (cache) {
        memcpy(cache, B, nn * sizeof(double));
        last_a = A; last_b = B; last_n = n;
    }
}
