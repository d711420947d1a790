// expect: ok problem: histogram threads: 2 n: 200000
// Private per-thread histograms: '#pragma omp masked' allocates them, a worksharing loop fills them, and '#pragma omp masked filter(last)' merges them into counts.
#include <stdint.h>
#include <stdlib.h> // calloc, free
#include <omp.h>

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    int64_t (*local)[256] = NULL; /* one row of 256 counters per thread */
#pragma omp parallel
    {
        const int nt = omp_get_num_threads();
#pragma omp masked
        local = calloc((size_t)nt, sizeof *local);
#pragma omp barrier
        if (local) {
            int64_t *mine = local[omp_get_thread_num()];
#pragma omp for schedule(static)
            for (int i = 0; i < n; i++)
                mine[x[i]]++;
            /* the loop's implicit barrier: every row is complete */
#pragma omp masked filter(nt - 1)
            for (int b = 0; b < 256; b++) {
                int64_t c = 0;
                for (int t = 0; t < nt; t++)
                    c += local[t][b];
                counts[b] = c;
            }
        }
    }
    if (!local) { /* no memory: count serially */
        for (int b = 0; b < 256; b++)
            counts[b] = 0;
        for (int i = 0; i < n; i++)
            counts[x[i]]++;
    }
    free(local);
}
