// expect: forbidden problem: histogram mode: serial
// The same correct array-section reduction in serial mode, its directive built by a stringizing macro around _Pragma, so the raw text shows neither '#pragma' nor 'omp parallel'.
#include <stdint.h>
#include <string.h>

#define STR(s) #s
#define DO(kind, what) _Pragma(STR(kind what))
#define COUNT_ALL DO(omp, parallel for reduction(+ : counts[:256])) for (int i = 0; i < n; i++)

void histogram(int n, const uint8_t *x, int64_t *counts)
{
    memset(counts, 0, 256 * sizeof *counts);
    COUNT_ALL
        counts[x[i]]++;
}
