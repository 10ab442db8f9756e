/*
 * convolution.cl - 2D convolution (correlation) of an image with a
 * filter_height x filter_width filter (default 17 x 17), single precision.
 *
 *   output[y][x] = sum_{i < filter_height, j < filter_width}
 *                  input[y + i][x + j] * filter[i][j]
 *
 * The input is the output's n x n area plus the filter's border, so no
 * bounds checks are needed: it is (n + filter_height - 1) rows of
 * (n + filter_width - 1) floats. All arrays are row-major.
 *
 * Arguments, in order:
 *   output  __global float*    n*n                    output
 *   input   __global float*    (n+16)*(n+16)          input (17 x 17 filter)
 *   filter  __constant float*  17*17                  input
 *   n       int                                       output width and height
 *
 * Tunable parameters (passed as -DNAME=VALUE):
 *   block_size_x   work-group size in x
 *   block_size_y   work-group size in y
 *   tile_size_x    outputs per work-item in x, block_size_x columns apart
 *   tile_size_y    outputs per work-item in y, block_size_y rows apart
 *   use_local_mem  1: the work-group first copies its input tile
 *                  ((block_size_y*tile_size_y + 16) x
 *                  (block_size_x*tile_size_x + 16)) to local memory
 *   use_padding    with use_local_mem, pads each local row by one float
 *                  (avoids bank conflicts on GPUs)
 *   use_restrict   1: input is declared const restrict (lets the compiler
 *                  assume no aliasing)
 * filter_width and filter_height (default 17) may be set with options;
 * the spec's sizes assume 17.
 *
 * Launch: problem_size (n, n); grid_div_x [block_size_x, tile_size_x],
 * grid_div_y [block_size_y, tile_size_y]; n must be a multiple of
 * block_size_x*tile_size_x and of block_size_y*tile_size_y.
 *
 * Every config sums each output over (i, j) in the same order into one
 * accumulator, so all configs compute the same result (up to fused
 * multiply-adds).
 */

#ifndef block_size_x
#define block_size_x 16
#endif
#ifndef block_size_y
#define block_size_y 16
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
#ifndef use_restrict
#define use_restrict 0
#endif
#ifndef filter_width
#define filter_width 17
#endif
#ifndef filter_height
#define filter_height 17
#endif

#define TILE_W (block_size_x * tile_size_x) /* output columns per work-group */
#define TILE_H (block_size_y * tile_size_y) /* output rows per work-group */
#define IN_TILE_W (TILE_W + filter_width - 1)
#define IN_TILE_H (TILE_H + filter_height - 1)
#define WG_SIZE (block_size_x * block_size_y)

#if use_restrict
#define INPUT_T __global const float *restrict
#else
#define INPUT_T __global float *
#endif

__kernel __attribute__((reqd_work_group_size(block_size_x, block_size_y, 1)))
void convolution_kernel(__global float *output, INPUT_T input,
                        __constant float *filter, int n)
{
    const int tx = get_local_id(0);
    const int ty = get_local_id(1);
    const int x0 = get_group_id(0) * TILE_W; /* the group's first output column */
    const int y0 = get_group_id(1) * TILE_H; /* the group's first output row */
    const int in_w = n + filter_width - 1;

    float sum[tile_size_y][tile_size_x];
    #pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
        #pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            sum[ti][tj] = 0.0f;
        }
    }

#if use_local_mem
    __local float tile[IN_TILE_H][IN_TILE_W + use_padding];
    for (int e = ty * block_size_x + tx; e < IN_TILE_H * IN_TILE_W; e += WG_SIZE) {
        const int r = e / IN_TILE_W, c = e % IN_TILE_W;
        tile[r][c] = input[(y0 + r) * in_w + x0 + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define IN(r, c) tile[(r)][(c)]
#else
#define IN(r, c) input[(y0 + (r)) * in_w + x0 + (c)]
#endif

    for (int i = 0; i < filter_height; i++) {
        for (int j = 0; j < filter_width; j++) {
            const float f = filter[i * filter_width + j];
            #pragma unroll
            for (int ti = 0; ti < tile_size_y; ti++) {
                #pragma unroll
                for (int tj = 0; tj < tile_size_x; tj++) {
                    sum[ti][tj] += IN(ty + ti * block_size_y + i, tx + tj * block_size_x + j) * f;
                }
            }
        }
    }

    #pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
        #pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            output[(y0 + ty + ti * block_size_y) * n + x0 + tx + tj * block_size_x] = sum[ti][tj];
        }
    }
}
