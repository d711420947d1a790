// expect: forbidden problem: histogram mode: serial
// No pragma and no omp.h: a correct histogram that only asks the OpenMP runtime for its thread count (declared by hand) to choose how many sub-tables to use; serial mode forbids any reference to the runtime.
#include <stdint.h>
#include <string.h>

int omp_get_num_threads(void);

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    int64_t h[4][256];
    memset(h, 0, sizeof h);
    int k = omp_get_num_threads() > 1 ? 4 : 2;
    for (int i = 0; i < n; i++)
        h[i % k][x[i]]++;
    for (int b = 0; b < 256; b++)
        counts[b] = h[0][b] + h[1][b] + h[2][b] + h[3][b];
}
