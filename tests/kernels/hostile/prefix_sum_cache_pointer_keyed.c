// expect: wrong_result problem: prefix_sum
// Remembers its last result with the (x, y, n) it was computed for and, when a later call passes the same pointers and size, copies it back without reading x: the inputs are fresh every call, so the second call at the odd size is already stale.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int64_t *last_x;
static int64_t *last_y, *saved;
static int last_n;

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    if (saved && x == last_x && y == last_y && n == last_n) {
        memcpy(y, saved, (size_t)n * sizeof *y);
        return;
    }
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
    free(saved);
    saved = malloc((size_t)n * sizeof *saved);
    if (saved)
        memcpy(saved, y, (size_t)n * sizeof *y);
    last_x = x;
    last_y = y;
    last_n = n;
}
