/*
 * reduction.cl - sum of a float array into `parts` partial sums, single
 * precision.
 *
 *   out[p] = sum of in[p*L .. (p+1)*L - 1],  L = n / parts,  p < parts
 *
 * The host (or a second pass) adds the parts partial sums. The partials
 * are fixed by the problem, not by the launch, so every config writes the
 * same output: work-group g sums parts g, g + num_blocks, g + 2*num_blocks,
 * ... and its work-items split each part between them.
 *
 * Arguments, in order:
 *   out    __global float*  parts   output: the partial sums
 *   in     __global float*  n       input
 *   n      int                      input length
 *   parts  int                      number of partial sums; divides n
 *
 * Tunable parameters (passed as -DNAME=VALUE):
 *   block_size_x        work-group size (a power of two: the work-group's
 *                       final sum is a tree in local memory)
 *   num_blocks          number of work-groups (at most parts)
 *   vector              elements per load: 1 (float), 2, 4 or 8 (floatN)
 *   loop_unroll_factor  independent accumulators per work-item (the load
 *                       loop is unrolled this many times)
 *   contiguous          0: work-item i reads vectors i, i + block_size_x, ...
 *                       (interleaved, coalesced on GPUs); 1: work-item i
 *                       reads one contiguous run of L / block_size_x elements
 *
 * Launch: problem_size (num_blocks * block_size_x), grid_div_x
 * [block_size_x] (the default), so there are num_blocks work-groups.
 * L must be a multiple of block_size_x * vector * loop_unroll_factor.
 *
 * The order of the additions depends on the config, so configs agree to
 * rounding (relative 1e-6 or so for uniform inputs), not bit for bit; a
 * config's own result is deterministic.
 */

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef num_blocks
#define num_blocks 16
#endif
#ifndef vector
#define vector 1
#endif
#ifndef loop_unroll_factor
#define loop_unroll_factor 1
#endif
#ifndef contiguous
#define contiguous 0
#endif

#if vector == 1
#define VEC_T float
#define HSUM(v) (v)
#elif vector == 2
#define VEC_T float2
#define HSUM(v) ((v).s0 + (v).s1)
#elif vector == 4
#define VEC_T float4
#define HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3))
#elif vector == 8
#define VEC_T float8
#define HSUM(v) ((((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
#else
#error "vector must be 1, 2, 4 or 8"
#endif

#define U loop_unroll_factor

__kernel __attribute__((reqd_work_group_size(block_size_x, 1, 1)))
void reduce_kernel(__global float *out, __global const float *in, int n, int parts)
{
    __local float partial[block_size_x];
    const int lid = get_local_id(0);
    const int seg_len = n / parts;        /* floats per part */
    const int nvec = seg_len / vector;    /* vectors per part */

    for (int p = get_group_id(0); p < parts; p += num_blocks) {
        __global const VEC_T *seg = (__global const VEC_T *)(in + (size_t)p * seg_len);

        VEC_T acc[U];
        #pragma unroll
        for (int u = 0; u < U; u++) {
            acc[u] = (VEC_T)(0.0f);
        }
#if contiguous
        const int per_item = nvec / block_size_x;
        __global const VEC_T *mine = seg + lid * per_item;
        for (int k = 0; k < per_item; k += U) {
            #pragma unroll
            for (int u = 0; u < U; u++) {
                acc[u] += mine[k + u];
            }
        }
#else
        for (int k = lid; k < nvec; k += block_size_x * U) {
            #pragma unroll
            for (int u = 0; u < U; u++) {
                acc[u] += seg[k + u * block_size_x];
            }
        }
#endif
        float s = 0.0f;
        #pragma unroll
        for (int u = 0; u < U; u++) {
            s += HSUM(acc[u]);
        }

        partial[lid] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int stride = block_size_x / 2; stride > 0; stride >>= 1) {
            if (lid < stride) {
                partial[lid] += partial[lid + stride];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) {
            out[p] = partial[0];
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* partial is reused for the next part */
    }
}
