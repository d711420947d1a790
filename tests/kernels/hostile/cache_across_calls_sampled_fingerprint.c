// expect: wrong_result
// Cache keyed on a cheap fingerprint of sampled inputs (do A[0] and B[0] share a sign?) plus n and the pointers; hits ~1 in 2 fresh calls.
#include <stdlib.h>
#include <string.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    static double *cache;
    static size_t cap;
    static unsigned key = ~0u;
    const size_t nn = (size_t)n * (size_t)n;
    /* "if the corner entries look the same, it is the same problem" */
    unsigned k = (unsigned)n * 2u + ((A[0] < 0) == (B[0] < 0));
    k ^= (unsigned)((size_t)A >> 6) ^ (unsigned)((size_t)B >> 12);

    if (cache && k == key) {
        memcpy(C, cache, nn * sizeof(double));
        return;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int kk = 0; kk < n; kk++) s += A[i * n + kk] * B[kk * n + j];
            C[i * n + j] = s;
        }
    if (nn > cap) { free(cache); cache = malloc(nn * sizeof(double)); cap = cache ? nn : 0; }
    if (cache) { memcpy(cache, C, nn * sizeof(double)); key = k; }
}
