// expect: wrong_result problem: histogram
// Caching by size: counts in full only the first call of each n, then returns those counts again (they sum to n, as the real ones do); inputs are fresh every call, so the bins differ.
#include <stdint.h>
#include <string.h>

static int known_n[4];
static int64_t known[4][256];

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    for (int k = 0; k < 4; k++)
        if (known_n[k] == n) {
            memcpy(counts, known[k], sizeof known[k]);
            return;
        }
    memset(counts, 0, 256 * sizeof *counts);
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
    for (int k = 0; k < 4; k++)
        if (known_n[k] == 0) {
            known_n[k] = n;
            memcpy(known[k], counts, sizeof known[k]);
            break;
        }
}
