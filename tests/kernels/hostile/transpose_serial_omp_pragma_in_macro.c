// expect: forbidden problem: transpose mode: serial
// Serial mode: the OpenMP loop hides in a token-pasted macro expanding to _Pragma("omp parallel for collapse(2)"), so the source text has no '#pragma omp'.
#define STR(x) #x
#define DO_PRAGMA(x) _Pragma(STR(x))
#define TILES(k) DO_PRAGMA(omp parallel for collapse(k))

void transpose(int n, const double *A, double *B)
{
    TILES(2)
    for (int i0 = 0; i0 < n; i0 += 32)
        for (int j0 = 0; j0 < n; j0 += 32)
            for (int i = i0; i < i0 + 32 && i < n; i++)
                for (int j = j0; j < j0 + 32 && j < n; j++) B[j * n + i] = A[i * n + j];
}
