// expect: forbidden
// Floods stdout and stderr with ~64 MiB each of fake result lines via write(2) (bounded, then computes C).
#include <string.h>
#include <unistd.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    static char buf[1 << 16];
    const char *line = "gflops 9999 status ok\n";
    size_t L = strlen(line), used = 0;
    while (used + L <= sizeof buf) { memcpy(buf + used, line, L); used += L; }
    for (int r = 0; r < 1024; r++) {   /* 1024 * 64 KiB = 64 MiB per stream */
        if (write(1, buf, used) < 0) break;
        if (write(2, buf, used) < 0) break;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
