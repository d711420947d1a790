// expect: ok
// Object-ish style: a typedef'd matrix view struct passed by value to exported helpers (mat_view, mat_at, mat_clear, mat_mul_add).
#include <stddef.h>
#include <stdbool.h>
#include <string.h>

typedef struct {
    int rows;
    int cols;
    int stride;
    double *data;
} MatView;

typedef struct {
    int rows;
    int cols;
    int stride;
    const double *data;
} ConstMatView;

MatView mat_view(double *data, int rows, int cols, int stride)
{
    MatView v = { rows, cols, stride, data };
    return v;
}

ConstMatView const_mat_view(const double *data, int rows, int cols, int stride)
{
    ConstMatView v = { rows, cols, stride, data };
    return v;
}

ConstMatView const_sub_view(ConstMatView m, int r0, int c0, int rows, int cols)
{
    return const_mat_view(m.data + (size_t)r0 * m.stride + c0, rows, cols, m.stride);
}

MatView sub_view(MatView m, int r0, int c0, int rows, int cols)
{
    return mat_view(m.data + (size_t)r0 * m.stride + c0, rows, cols, m.stride);
}

double mat_at(ConstMatView m, int r, int c)
{
    return m.data[(size_t)r * m.stride + c];
}

void mat_clear(MatView m)
{
    for (int r = 0; r < m.rows; r++)
        memset(m.data + (size_t)r * m.stride, 0, sizeof(double) * (size_t)m.cols);
}

bool shapes_compatible(ConstMatView a, ConstMatView b, MatView c)
{
    return a.cols == b.rows && a.rows == c.rows && b.cols == c.cols;
}

/* c += a * b */
void mat_mul_add(ConstMatView a, ConstMatView b, MatView c)
{
    if (!shapes_compatible(a, b, c))
        return;
    for (int i = 0; i < a.rows; i++) {
        double *crow = c.data + (size_t)i * c.stride;
        for (int p = 0; p < a.cols; p++) {
            const double aip = mat_at(a, i, p);
            const double *brow = b.data + (size_t)p * b.stride;
            for (int j = 0; j < b.cols; j++)
                crow[j] += aip * brow[j];
        }
    }
}

void dgemm(int n, const double *A, const double *B, double *C)
{
    const int bs = 64;
    ConstMatView a = const_mat_view(A, n, n, n);
    ConstMatView b = const_mat_view(B, n, n, n);
    MatView c = mat_view(C, n, n, n);
    mat_clear(c);

    for (int i0 = 0; i0 < n; i0 += bs) {
        int mi = n - i0 < bs ? n - i0 : bs;
        for (int k0 = 0; k0 < n; k0 += bs) {
            int mk = n - k0 < bs ? n - k0 : bs;
            for (int j0 = 0; j0 < n; j0 += bs) {
                int mj = n - j0 < bs ? n - j0 : bs;
                mat_mul_add(const_sub_view(a, i0, k0, mi, mk),
                            const_sub_view(b, k0, j0, mk, mj),
                            sub_view(c, i0, j0, mi, mj));
            }
        }
    }
}
