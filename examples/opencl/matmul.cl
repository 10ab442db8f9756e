/*
 * matmul.cl - tiled single-precision matrix multiplication C = A * B.
 *
 * All matrices are square, n x n, row-major.
 *
 * Arguments, in order:
 *   C  __global float*  n*n   output
 *   A  __global float*  n*n   input
 *   B  __global float*  n*n   input
 *   n  int                    matrix order
 *
 * Tunable parameters (passed as -DNAME=VALUE):
 *   block_size_x         work-group size in x (columns of C)
 *   block_size_y         work-group size in y (rows of C)
 *   tile_size_x          outputs per work-item in x; they are block_size_x
 *                        columns apart, so neighbouring work-items touch
 *                        neighbouring columns
 *   tile_size_y          outputs per work-item in y, block_size_y rows apart
 *   use_local_mem        0: every operand comes from global memory;
 *                        1: the work-group stages a (block_size_y*tile_size_y)
 *                        x TILE_K block of A and a TILE_K x
 *                        (block_size_x*tile_size_x) block of B in local memory
 *   loop_unroll_factor_k unroll factor of the innermost k loop
 *
 * Launch: problem_size (n, n); grid_div_x [block_size_x, tile_size_x],
 * grid_div_y [block_size_y, tile_size_y]. The kernel does no bounds checks:
 * n must be a multiple of block_size_x*tile_size_x, of
 * block_size_y*tile_size_y and (with use_local_mem) of TILE_K.
 *
 * Every config sums each C element over k = 0 .. n-1 in order into one
 * accumulator, so all configs compute the same result (up to the
 * compiler's choice of fused multiply-adds).
 */

#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 1
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef use_local_mem
#define use_local_mem 0
#endif
#ifndef loop_unroll_factor_k
#define loop_unroll_factor_k 1
#endif
#ifndef TILE_K
#define TILE_K 16
#endif

#define TILE_M (block_size_y * tile_size_y) /* rows of C per work-group */
#define TILE_N (block_size_x * tile_size_x) /* columns of C per work-group */
#define WG_SIZE (block_size_x * block_size_y)

#define PRAGMA(x) _Pragma(#x)
#define UNROLL(n) PRAGMA(unroll n)

__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void matmul_kernel(__global float *C, __global const float *A,
                   __global const float *B, int n)
{
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int col0 = get_group_id(0) * TILE_N + tx; /* first column of this item */
    const int row0 = get_group_id(1) * TILE_M + ty; /* first row of this item */

    float sum[tile_size_y][tile_size_x];
    #pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            sum[i][j] = 0.0f;
        }
    }

#if use_local_mem
    __local float sA[TILE_M][TILE_K];
    __local float sB[TILE_K][TILE_N];
    const int lid = ty * block_size_x + tx;
    const int rowg = get_group_id(1) * TILE_M; /* first row of the group */
    const int colg = get_group_id(0) * TILE_N; /* first column of the group */

    for (int kt = 0; kt < n; kt += TILE_K) {
        /* stage the blocks of A and B, all work-items together */
        for (int e = lid; e < TILE_M * TILE_K; e += WG_SIZE) {
            const int r = e / TILE_K, c = e % TILE_K;
            sA[r][c] = A[(rowg + r) * n + kt + c];
        }
        for (int e = lid; e < TILE_K * TILE_N; e += WG_SIZE) {
            const int r = e / TILE_N, c = e % TILE_N;
            sB[r][c] = B[(kt + r) * n + colg + c];
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        UNROLL(loop_unroll_factor_k)
        for (int k = 0; k < TILE_K; k++) {
            float a[tile_size_y], b[tile_size_x];
            #pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
                a[i] = sA[ty + i * block_size_y][k];
            }
            #pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                b[j] = sB[k][tx + j * block_size_x];
            }
            #pragma unroll
            for (int i = 0; i < tile_size_y; i++) {
                #pragma unroll
                for (int j = 0; j < tile_size_x; j++) {
                    sum[i][j] += a[i] * b[j];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    UNROLL(loop_unroll_factor_k)
    for (int k = 0; k < n; k++) {
        float a[tile_size_y], b[tile_size_x];
        #pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            a[i] = A[(row0 + i * block_size_y) * n + k];
        }
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            b[j] = B[k * n + col0 + j * block_size_x];
        }
        #pragma unroll
        for (int i = 0; i < tile_size_y; i++) {
            #pragma unroll
            for (int j = 0; j < tile_size_x; j++) {
                sum[i][j] += a[i] * b[j];
            }
        }
    }
#endif

    #pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
        #pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            C[(row0 + i * block_size_y) * n + col0 + j * block_size_x] = sum[i][j];
        }
    }
}
