// OpenMP + AVX-512: every thread takes a contiguous range of rows holding an equal share of the nonzeros (binary search on rowptr), and does each row with 8-wide gathers and a masked tail.
#include <immintrin.h>
#include <omp.h>

/* First row whose nonzeros start at or after `target`. */
static int row_of(const int *rowptr, int n, int target)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (rowptr[mid] < target) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static inline double row_dot(const int *restrict col, const double *restrict val, const double *restrict x, int k, int end)
{
    __m512d s0 = _mm512_setzero_pd(), s1 = _mm512_setzero_pd();
    for (; k + 16 <= end; k += 16) {
        __m256i c0 = _mm256_loadu_si256((const __m256i *)(col + k));
        __m256i c1 = _mm256_loadu_si256((const __m256i *)(col + k + 8));
        s0 = _mm512_fmadd_pd(_mm512_loadu_pd(val + k), _mm512_i32gather_pd(c0, x, 8), s0);
        s1 = _mm512_fmadd_pd(_mm512_loadu_pd(val + k + 8), _mm512_i32gather_pd(c1, x, 8), s1);
    }
    if (k + 8 <= end) {
        __m256i c0 = _mm256_loadu_si256((const __m256i *)(col + k));
        s0 = _mm512_fmadd_pd(_mm512_loadu_pd(val + k), _mm512_i32gather_pd(c0, x, 8), s0);
        k += 8;
    }
    if (k < end) {
        __mmask8 m = (__mmask8)((1u << (end - k)) - 1u);
        __m256i c1 = _mm256_maskz_loadu_epi32(m, col + k);
        __m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), m, c1, x, 8);
        s1 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, val + k), g, s1);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
}

void spmv(int n, const int *restrict rowptr, const int *restrict col, const double *restrict val,
          const double *restrict x, double *restrict y)
{
    const long nnz = rowptr[n];
    #pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int first = t == 0 ? 0 : row_of(rowptr, n, (int)(nnz * t / nt));
        const int last = t == nt - 1 ? n : row_of(rowptr, n, (int)(nnz * (t + 1) / nt));
        for (int i = first; i < last; i++)
            y[i] = row_dot(col, val, x, rowptr[i], rowptr[i + 1]);
    }
}
