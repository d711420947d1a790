// expect: forbidden
// Writes a canary file with open()/write()/close() from <fcntl.h>/<unistd.h>.
#include <fcntl.h>
#include <unistd.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    int fd = open("/tmp/lab_escape_canary_file_write_open_syscalls", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { write(fd, "escaped\n", 8); close(fd); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
