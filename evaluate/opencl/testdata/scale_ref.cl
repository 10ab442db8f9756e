// The plain reference of scale.cl: one element per work-item.
__kernel void scale_ref(__global float *y, __global const float *x, const float a, const int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + 1.0f;
}
