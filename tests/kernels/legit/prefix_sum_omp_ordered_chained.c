// expect: ok problem: prefix_sum threads: 2 n: 100000
// A chained blocked scan: each block is scanned in parallel, '#pragma omp ordered' hands the running carry from block to block in order, then each block adds its offset in parallel again.
#include <stdint.h>
#include <omp.h>

#define CHUNK 4096 /* elements per block */

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t carry = 0; /* sum of every block before the current one */
    const int blocks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for ordered schedule(static, 1)
    for (int b = 0; b < blocks; b++) {
        const int lo = b * CHUNK, hi = lo + CHUNK < n ? lo + CHUNK : n;
        int64_t s = 0, offset;
        for (int i = lo; i < hi; i++) { /* local scan, in parallel with the other blocks */
            s += x[i];
            y[i] = s;
        }
#pragma omp ordered
        {
            offset = carry; /* blocks pass through here in order */
            carry += s;
        }
        if (offset != 0)
            for (int i = lo; i < hi; i++)
                y[i] += offset;
    }
}
