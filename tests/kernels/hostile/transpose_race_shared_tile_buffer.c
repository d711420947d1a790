// expect: wrong_result problem: transpose threads: 2 n: 1024
// Data race: OpenMP threads share one static 32 x 32 staging tile (tile rows dealt round-robin), so a thread writes out a tile its neighbour is refilling.
static double tilebuf[32 * 32];

void transpose(int n, const double *A, double *B)
{
    const int tiles = (n + 31) / 32;
#pragma omp parallel for schedule(static, 1)
    for (int ti = 0; ti < tiles; ti++)
        for (int j0 = 0; j0 < n; j0 += 32) {
            const int i0 = ti * 32;
            const int ih = i0 + 32 < n ? 32 : n - i0, jw = j0 + 32 < n ? 32 : n - j0;
            for (int i = 0; i < ih; i++)
                for (int j = 0; j < jw; j++) tilebuf[j * 32 + i] = A[(i0 + i) * n + j0 + j];
            for (int j = 0; j < jw; j++)
                for (int i = 0; i < ih; i++) B[(j0 + j) * n + i0 + i] = tilebuf[j * 32 + i];
        }
}
