// expect: compile_error
// 4096 exported data symbols with 100-character names made by __COUNTER__ pasting: the expansion passes the 128 KiB cap on the own expanded lines, so it is refused before any object tool runs.
#include <stddef.h>
#define LONG_ exported_helper_symbol_with_a_deliberately_long_name_to_fill_the_symbol_and_string_tables_xxxxxx
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SYM double CAT(LONG_, __COUNTER__) = 1.0;
#define S4 SYM SYM SYM SYM
#define S16 S4 S4 S4 S4
#define S64 S16 S16 S16 S16
#define S256 S64 S64 S64 S64
#define S1024 S256 S256 S256 S256
S1024
S1024
S1024
S1024
static const double scale = 1.0;

void dgemm(int n, const double *A, const double *B, double *C) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] = s * CAT(LONG_, 7);
        }
}
