// naive ijk under '#pragma omp parallel for if(0)': one thread (true: none)
void dgemm(int n, const double *A, const double *B, double *C) {
#pragma omp parallel for if(0)
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
            C[i * n + j] = s;
        }
}
