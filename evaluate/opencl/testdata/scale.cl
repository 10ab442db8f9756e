// y[i] = a * x[i] + 1 for i < n, each work-item doing work_per_item
// elements. FAULT selects a deliberate fault for the tests: 0 none,
// 1 a wrong result, 2 a compile error, 3 a kernel that never returns,
// 4 a write through a null pointer.
__kernel void scale(__global float *y, __global const float *x, const float a, const int n) {
	int base = (get_group_id(0) * block_size_x * work_per_item) + get_local_id(0);
	for (int j = 0; j < work_per_item; j++) {
		int i = base + j * block_size_x;
		if (i < n) {
#if FAULT == 1
			y[i] = a * x[i] + (i == 7 ? 2.0f : 1.0f);
#else
			y[i] = a * x[i] + 1.0f;
#endif
		}
	}
#if FAULT == 2
	this is not C;
#elif FAULT == 3
	volatile int k = 1;
	while (k) { y[0] = k; }
#elif FAULT == 4
	if (get_global_id(0) == 0) { ((__global volatile float *)0)[12345] = 1.0f; }
#endif
}
