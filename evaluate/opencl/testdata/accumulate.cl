// y += x: y is read and written, so every run must start from its
// initial content; x is const, so it keeps its own.
__kernel void accumulate(__global float *y, __global const float *x, const int n) {
    int i = get_global_id(0);
    if (i < n) y[i] += x[i];
}
