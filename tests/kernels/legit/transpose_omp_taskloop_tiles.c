// expect: ok problem: transpose threads: 2 n: 512
// Tiles of rows handed out as tasks: one thread creates them with '#pragma omp taskloop grainsize(1)' inside 'parallel' + 'single', every thread runs them.
#define TILE 32

void transpose(int n, const double *A, double *B)
{
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(1)
    for (int i0 = 0; i0 < n; i0 += TILE) {
        const int i1 = i0 + TILE < n ? i0 + TILE : n;
        for (int j0 = 0; j0 < n; j0 += TILE) {
            const int j1 = j0 + TILE < n ? j0 + TILE : n;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1; j++)
                    B[(long)j * n + i] = A[(long)i * n + j];
        }
    }
}
