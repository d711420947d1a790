// expect: forbidden
// Hides '#pragma omp teams num_teams(4) thread_limit(4)' in a stringizing _Pragma macro, so the raw text shows no #pragma at all.
#include <stddef.h>
#define PRAGMA(x) _Pragma(#x)
#define TEAMS PRAGMA(omp teams num_teams(4) thread_limit(4))

void dgemm(int n, const double *A, const double *B, double *C) {
    TEAMS
    {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    }
}
