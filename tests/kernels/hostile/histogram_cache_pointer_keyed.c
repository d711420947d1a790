// expect: wrong_result problem: histogram
// Remembers the counts it computed for (x, counts, n) and returns them again when a later call passes the same pointers and size, without reading x: the inputs are fresh every call.
#include <stdint.h>
#include <string.h>

static const uint8_t *last_x;
static int64_t *last_counts, saved[256];
static int last_n;

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    if (x == last_x && counts == last_counts && n == last_n) {
        memcpy(counts, saved, sizeof saved);
        return;
    }
    memset(counts, 0, 256 * sizeof *counts);
    for (int i = 0; i < n; i++)
        counts[x[i]]++;
    memcpy(saved, counts, sizeof saved);
    last_x = x;
    last_counts = counts;
    last_n = n;
}
