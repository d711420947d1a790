// expect: wrong_result problem: histogram
// Eight sub-histograms fed by 8-byte words with no tail loop: right only when n is a multiple of 8 (the corpus's n=128), short by the last 7 bytes at the odd size 10007.
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    uint32_t h[8][256];
    memset(h, 0, sizeof h);
    for (int i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, x + i, 8);
        for (int k = 0; k < 8; k++)
            h[k][(w >> (8 * k)) & 255]++;
    }
    for (int b = 0; b < 256; b++) {
        int64_t s = 0;
        for (int k = 0; k < 8; k++)
            s += h[k][b];
        counts[b] = s;
    }
}
