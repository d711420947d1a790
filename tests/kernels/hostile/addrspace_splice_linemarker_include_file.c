// expect: forbidden
// Backslash-space-newline splices (gcc joins them, the source check does not) hide a line marker and an #include of /etc/os-release from both text checks; gcc reads the file and its compile errors quote it back (CR-only line breaks do the same when the text is not newline-translated).
# \ 
1 "/usr/include/stdlib.h" 3
# \ 
include "/etc/os-release"
# \ 
9 "candidate.c"
#include <stddef.h>

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}
