// expect: forbidden problem: transpose mode: serial
// Serial mode: no pragma and no omp.h, but a call into the OpenMP runtime (omp_get_num_threads, declared by hand) to size the tiles.
int omp_get_num_threads(void);

void transpose(int n, const double *A, double *B)
{
    const int t = 16 * omp_get_num_threads() + 16;
    for (int i0 = 0; i0 < n; i0 += t)
        for (int j0 = 0; j0 < n; j0 += t)
            for (int i = i0; i < i0 + t && i < n; i++)
                for (int j = j0; j < j0 + t && j < n; j++) B[j * n + i] = A[i * n + j];
}
