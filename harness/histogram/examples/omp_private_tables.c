// OpenMP: each thread counts its static chunk into eight private 32-bit sub-histograms (8-byte
// words, as in sub_histograms8.c), then adds them into counts under a critical section.
#include <omp.h>
#include <stdint.h>
#include <string.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
#pragma omp parallel
    {
        int T = omp_get_num_threads(), t = omp_get_thread_num();
        long lo = (long)n * t / T, hi = (long)n * (t + 1) / T;
        uint32_t h[8][256];
        memset(h, 0, sizeof h);
        long i = lo;
        for (; i + 8 <= hi; i += 8) {
            uint64_t w;
            memcpy(&w, x + i, 8);
            h[0][w & 255]++;
            h[1][(w >> 8) & 255]++;
            h[2][(w >> 16) & 255]++;
            h[3][(w >> 24) & 255]++;
            h[4][(w >> 32) & 255]++;
            h[5][(w >> 40) & 255]++;
            h[6][(w >> 48) & 255]++;
            h[7][w >> 56]++;
        }
        for (; i < hi; i++)
            h[0][x[i]]++;
#pragma omp critical
        for (int b = 0; b < 256; b++) {
            int64_t s = 0;
            for (int k = 0; k < 8; k++)
                s += h[k][b];
            counts[b] += s;
        }
    }
}
