// expect: forbidden
// Declares open/write/close by hand with only allowed headers and writes a canary file.
#include <string.h>
int open(const char *path, int flags, ...);
long write(int fd, const void *buf, unsigned long count);
int close(int fd);

void dgemm(int n, const double *A, const double *B, double *C)
{
    const char *msg = "escaped\n";
    int fd = open("/tmp/lab_escape_canary_file_write_declared_by_hand", 01 | 0100 | 01000, 0644);
    if (fd >= 0) { write(fd, msg, strlen(msg)); close(fd); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
