// expect: compile_error
// A macro that expands to 8192 unclosed `__attribute__((` (128 KiB, under the 512 KiB cap on expanded code): the attribute regex's lazy `.*?` rescans to the end from each one, O(n^2) parent CPU (seconds here, about a minute at the cap) before gcc is even asked to compile.
#include <stddef.h>
#define A1 __attribute__((
#define A4 A1 A1 A1 A1
#define A16 A4 A4 A4 A4
#define A64 A16 A16 A16 A16
#define A256 A64 A64 A64 A64
#define A1024 A256 A256 A256 A256
#define A4096 A1024 A1024 A1024 A1024
A4096 A4096;

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s;
        }
}
