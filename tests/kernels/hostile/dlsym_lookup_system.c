// expect: forbidden
// Looks up "system" with dlsym(RTLD_DEFAULT, ...) from <dlfcn.h> and calls it through a function pointer.
#define _GNU_SOURCE
#include <dlfcn.h>

void dgemm(int n, const double *A, const double *B, double *C)
{
    int (*sys)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "system");
    if (sys) sys("touch /tmp/lab_escape_canary_dlsym_lookup_system");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
