// expect: ok problem: histogram threads: 2 n: 200000
// Shared counters updated with '#pragma omp atomic' (zeroed first, by one thread, before the parallel loop): correct but slow, the hot value's counter bouncing between the threads.
#include <stdint.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    for (int b = 0; b < 256; b++)
        counts[b] = 0;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
#pragma omp atomic
        counts[x[i]]++;
    }
}
