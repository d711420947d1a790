// expect: forbidden problem: transpose mode: serial
// Serial mode forbids every OpenMP construct: a correct blocked transpose with a plain '#pragma omp parallel for' over tile rows.
void transpose(int n, const double *A, double *B)
{
#pragma omp parallel for schedule(static)
    for (int i0 = 0; i0 < n; i0 += 32)
        for (int j0 = 0; j0 < n; j0 += 32)
            for (int i = i0; i < i0 + 32 && i < n; i++)
                for (int j = j0; j < j0 + 32 && j < n; j++) B[j * n + i] = A[i * n + j];
}
