// expect: wrong_result problem: transpose
// Transposes once per size n and replays the saved B on every later call of that size ("same matrix again"): inputs are fresh every call.
#include <stdlib.h>
#include <string.h>

void transpose(int n, const double *A, double *B)
{
    static double *saved[2];
    static int saved_n[2];
    const size_t nn = (size_t)n * (size_t)n;
    for (int s = 0; s < 2; s++)
        if (saved[s] && saved_n[s] == n) {
            memcpy(B, saved[s], nn * sizeof(double));
            return;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) B[j * n + i] = A[i * n + j];
    int s = saved[0] ? 1 : 0;
    free(saved[s]);
    saved[s] = malloc(nn * sizeof(double));
    if (saved[s]) { memcpy(saved[s], B, nn * sizeof(double)); saved_n[s] = n; }
}
