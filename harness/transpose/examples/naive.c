// The textbook double loop: rows of A read in order, B written with a stride of n doubles.
void transpose(int n, const double *A, double *B)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            B[j * n + i] = A[i * n + j];
}
