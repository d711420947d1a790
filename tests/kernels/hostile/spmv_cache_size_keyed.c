// expect: wrong_result problem: spmv
// Keeps one remembered y per size n and returns it whenever n repeats (no pointer check at all); inputs are fresh every call, so the second call at the odd size already gets stale values.
#include <string.h>

#define SLOTS 4
static int slot_n[SLOTS];
static double slot_y[SLOTS][4096];

void spmv(int n, const int *rowptr, const int *col, const double *val, const double *x, double *y)
{
    for (int s = 0; s < SLOTS; s++)
        if (slot_n[s] == n) {
            memcpy(y, slot_y[s], (size_t)n * sizeof *y);
            return;
        }
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) acc += val[k] * x[col[k]];
        y[i] = acc;
    }
    if (n <= 4096)
        for (int s = 0; s < SLOTS; s++)
            if (slot_n[s] == 0) {
                slot_n[s] = n;
                memcpy(slot_y[s], y, (size_t)n * sizeof *y);
                break;
            }
}
