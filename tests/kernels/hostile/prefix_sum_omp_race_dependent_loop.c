// expect: wrong_result problem: prefix_sum threads: 2 n: 1000000
// Data race: '#pragma omp parallel for' over y[i] = y[i-1] + x[i]; the second thread starts its half by reading y[n/2 - 1] long before the first thread has written it (it still holds the driver's poison).
#include <stdint.h>

void prefix_sum(int n, const int64_t *x, int64_t *y)
{
    y[0] = x[0];
#pragma omp parallel for schedule(static)
    for (int i = 1; i < n; i++)
        y[i] = y[i - 1] + x[i];
}
