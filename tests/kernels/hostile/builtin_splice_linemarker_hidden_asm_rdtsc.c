// expect: forbidden
// Inline asm reading the time-stamp counter, placed after a line marker hidden by a backslash-space-newline splice (the asm keyword split by another splice, so neither text check sees it); only the object check can catch the rdtsc instruction.
#include <stddef.h>
#include <stdint.h>

# \ 
1 "/usr/include/stdint.h" 3
static inline uint64_t cycles(void) { uint32_t lo, hi; __as\ 
m__ volatile("rdtsc" : "=a"(lo), "=d"(hi)); return ((uint64_t)hi << 32) | lo; }
# \ 
10 "candidate.c"

static uint64_t last;

void dgemm(int n, const double *A, const double *B, double *C) {
    last = cycles();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
    if (last == 1) C[0] = 0.0;
}
