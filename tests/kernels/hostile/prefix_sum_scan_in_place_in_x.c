// expect: wrong_result problem: prefix_sum
// Casts away const and scans x in place (then copies it to y): y is right, but the const input is modified, which the measurer's pristine copy catches.
#include <stdint.h>
#include <string.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    int64_t *w = (int64_t *)x;
    for (int i = 1; i < n; i++)
        w[i] += w[i - 1];
    memcpy(y, w, (size_t)n * sizeof *y);
}
