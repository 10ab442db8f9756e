/*
 * stencil.cl - one Jacobi step of a 2D 5-point stencil, single precision.
 *
 *   out[y][x] = 0.5 * u[y+1][x+1]
 *             + 0.125 * (u[y][x+1] + u[y+2][x+1] + u[y+1][x] + u[y+1][x+2])
 *
 * u is the n x n grid with a one-cell halo on every side, (n+2) x (n+2)
 * floats; out is the n x n interior. Both are row-major.
 *
 * Arguments, in order:
 *   out  __global float*  n*n          output
 *   u    __global float*  (n+2)*(n+2)  input
 *   n    int                           interior width and height
 *
 * Tunable parameters (passed as -DNAME=VALUE):
 *   block_size_x   work-group size in x
 *   block_size_y   work-group size in y
 *   tile_size_x    outputs per work-item in x, block_size_x columns apart
 *   tile_size_y    outputs per work-item in y, block_size_y rows apart
 *   use_local_mem  1: the work-group first copies its input tile with halo,
 *                  (block_size_y*tile_size_y + 2) x
 *                  (block_size_x*tile_size_x + 2), to local memory
 *   use_padding    with use_local_mem, pads each local row by one float
 *
 * Launch: problem_size (n, n); grid_div_x [block_size_x, tile_size_x],
 * grid_div_y [block_size_y, tile_size_y]; n must be a multiple of
 * block_size_x*tile_size_x and of block_size_y*tile_size_y.
 *
 * Every config evaluates the same expression in the same order, so all
 * configs compute the same result (up to fused multiply-adds).
 */

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 4
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
#ifndef use_padding
#define use_padding 0
#endif

#define TILE_W (block_size_x * tile_size_x) /* output columns per work-group */
#define TILE_H (block_size_y * tile_size_y) /* output rows per work-group */
#define WG_SIZE (block_size_x * block_size_y)

__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void stencil_kernel(__global float *out, __global const float *u, int n)
{
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int x0 = get_group_id(0) * TILE_W; /* the group's first output column */
    const int y0 = get_group_id(1) * TILE_H; /* the group's first output row */
    const int w = n + 2;                     /* row length of u */

#if use_local_mem
    __local float tile[TILE_H + 2][TILE_W + 2 + use_padding];
    for (int e = ty * block_size_x + tx; e < (TILE_H + 2) * (TILE_W + 2); e += WG_SIZE) {
        const int r = e / (TILE_W + 2), c = e % (TILE_W + 2);
        tile[r][c] = u[(y0 + r) * w + x0 + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define ROW(r) (tile[(r)])
    typedef __local const float *row_t;
#else
#define ROW(r) (u + (y0 + (r)) * w + x0)
    typedef __global const float *row_t;
#endif

    #pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
        /* rows of u above, at and below this output row, from the group's corner */
        const int r = ty + ti * block_size_y + 1;
        const row_t up = ROW(r - 1), mid = ROW(r), down = ROW(r + 1);
        __global float *dst = out + (y0 + r - 1) * n + x0;
        #pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            const int c = tx + tj * block_size_x + 1;
            dst[c - 1] = 0.5f * mid[c] + 0.125f * (up[c] + down[c] + mid[c - 1] + mid[c + 1]);
        }
    }
}
