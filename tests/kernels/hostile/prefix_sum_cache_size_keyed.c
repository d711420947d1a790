// expect: wrong_result problem: prefix_sum
// Keeps one remembered result per size (a small table keyed by n only) and recomputes only every 16th call of a size, returning the stored scan otherwise: inputs are fresh every call, so any reuse is wrong.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4
static int slot_n[SLOTS], slot_uses[SLOTS];
static int64_t *slot_y[SLOTS];

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    for (int k = 0; k < SLOTS; k++)
        if (slot_y[k] && slot_n[k] == n && ++slot_uses[k] % 16 != 0) {
            memcpy(y, slot_y[k], (size_t)n * sizeof *y);
            return;
        }
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        y[i] = s;
    }
    int k = 0;
    while (k < SLOTS - 1 && slot_y[k] && slot_n[k] != n)
        k++;
    free(slot_y[k]);
    slot_y[k] = malloc((size_t)n * sizeof *y);
    if (slot_y[k])
        memcpy(slot_y[k], y, (size_t)n * sizeof *y);
    slot_n[k] = n;
}
