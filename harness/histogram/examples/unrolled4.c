// Unrolled by 4 with four 64-bit sub-histograms (no OpenMP, no word tricks): the textbook loop
// with its store-to-load chain split four ways.
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    int64_t h0[256], h1[256], h2[256], h3[256];
    memset(h0, 0, sizeof h0);
    memset(h1, 0, sizeof h1);
    memset(h2, 0, sizeof h2);
    memset(h3, 0, sizeof h3);
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        h0[x[i]]++;
        h1[x[i + 1]]++;
        h2[x[i + 2]]++;
        h3[x[i + 3]]++;
    }
    for (; i < n; i++)
        h0[x[i]]++;
    for (int b = 0; b < 256; b++)
        counts[b] = h0[b] + h1[b] + h2[b] + h3[b];
}
