// y[i] = 2 x[i], or 2 x[i] + 1 (a wrong answer) where read_only is 0: a
// parameter named as an OpenCL C qualifier, as in Kernel Tuner's
// convolution example, which only a #define in the source allows.
__kernel void twice(__global float *y, __global const float *x, const int n) {
	int i = get_group_id(0) * block_size_x + get_local_id(0);
	if (i < n && grid_size_x * block_size_x >= n && kernel_tuner == 1) {
#if read_only
		y[i] = 2.0f * x[i];
#else
		y[i] = 2.0f * x[i] + 1.0f;
#endif
	}
}
