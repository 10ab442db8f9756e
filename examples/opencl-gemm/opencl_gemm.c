/*
 * opencl_gemm: the loop a quasim user runs. It asks quasimd for the config
 * of the OpenCL kernel matmul-cl (examples/opencl/matmul.yaml) at an n x n
 * problem, builds examples/opencl/matmul.cl with that config's defines
 * (quasim_defines: the options quasimd compiled and verified it with),
 * launches it over the geometry the spec gives, times it with OpenCL
 * profiling events, and checks C = A*B against a plain C reference.
 *
 *   cc -O2 -std=c99 -pthread opencl_gemm.c ../../runtime/c/quasim.c -lOpenCL -o opencl_gemm
 *   ./opencl_gemm [-s SOCKET] [-n N] [-k KERNEL_FILE] [-r RUNS]
 *
 * With no daemon, or no config for this problem, the defaults below are
 * built and run, and the reason is printed. Exit status: 0 when the result
 * is right, 1 when it is wrong or OpenCL fails, 2 on bad arguments.
 */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../runtime/c/quasim.h"

#define FAIL(...) do { fprintf(stderr, "opencl_gemm: " __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)
#define CHECK_CL(call) do { cl_int e_ = (call); if (e_ != CL_SUCCESS) FAIL("%s: OpenCL error %d", #call, e_); } while (0)

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		FAIL("%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
		FAIL("%s: cannot read", path);
	s[n] = '\0';
	fclose(f);
	return s;
}

static int param(const quasim_result *r, const char *name)
{
	const char *v = quasim_get(r, name);
	if (!v)
		FAIL("the config has no %s", name);
	return atoi(v);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *kfile = "examples/opencl/matmul.cl";
	int n = 256, runs = 10, opt;
	while ((opt = getopt(argc, argv, "s:n:k:r:")) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'k': kfile = optarg; break;
		case 'r': runs = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-s SOCKET] [-n N] [-k KERNEL_FILE] [-r RUNS]\n", argv[0]);
			return 2;
		}
	}
	if (n <= 0 || runs <= 0) {
		fprintf(stderr, "opencl_gemm: -n and -r take positive numbers\n");
		return 2;
	}

	/* 1. Ask quasimd. */
	quasim_param defaults[] = {
		{"block_size_x", "16"}, {"block_size_y", "1"}, {"tile_size_x", "1"},
		{"tile_size_y", "1"}, {"use_local_mem", "0"}, {"loop_unroll_factor_k", "1"},
	};
	quasim_client *q = quasim_open(sock, 200, 10000);
	if (!q)
		FAIL("out of memory");
	char problem[32];
	snprintf(problem, sizeof problem, "%d", n);
	quasim_result r;
	if (quasim_lookup(q, "matmul-cl", problem, defaults, 6, &r) == 0)
		printf("config %s (%s, certificate %.16s)\n", r.key, r.match, r.certificate);
	else
		printf("config: the defaults (%s)\n", r.reason);
	char options[1024];
	if (quasim_defines(&r, options, sizeof options) < 0)
		FAIL("the config's defines do not fit %zu bytes", sizeof options);
	printf("options %s\n", options);
	quasim_close(q);

	/* 2. The launch geometry the spec gives: problem n x n, grid_div_x
	 * [block_size_x, tile_size_x], grid_div_y [block_size_y, tile_size_y]. */
	size_t local[2] = {(size_t)param(&r, "block_size_x"), (size_t)param(&r, "block_size_y")};
	size_t per_x = local[0] * (size_t)param(&r, "tile_size_x"), per_y = local[1] * (size_t)param(&r, "tile_size_y");
	size_t global[2] = {(n + per_x - 1) / per_x * local[0], (n + per_y - 1) / per_y * local[1]};

	/* 3. Build and run. */
	cl_platform_id platform;
	cl_device_id device;
	cl_uint np = 0;
	CHECK_CL(clGetPlatformIDs(1, &platform, &np));
	if (np == 0)
		FAIL("no OpenCL platform");
	if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL) != CL_SUCCESS)
		CHECK_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
	CHECK_CL(err);
	cl_command_queue queue = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
	CHECK_CL(err);
	char *src = read_file(kfile);
	cl_program prog = clCreateProgramWithSource(ctx, 1, (const char **)&src, NULL, &err);
	CHECK_CL(err);
	if (clBuildProgram(prog, 1, &device, options, NULL, NULL) != CL_SUCCESS) {
		char log[4096];
		clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
		FAIL("build with %s:\n%s", options, log);
	}
	cl_kernel kern = clCreateKernel(prog, "matmul_kernel", &err);
	CHECK_CL(err);

	size_t bytes = (size_t)n * n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	if (!a || !b || !c)
		FAIL("out of memory");
	srand(1);
	for (size_t i = 0; i < (size_t)n * n; i++) {
		a[i] = (float)rand() / RAND_MAX;
		b[i] = (float)rand() / RAND_MAX;
	}
	cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
	CHECK_CL(err);
	cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
	CHECK_CL(err);
	cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
	CHECK_CL(err);
	CHECK_CL(clSetKernelArg(kern, 0, sizeof dc, &dc));
	CHECK_CL(clSetKernelArg(kern, 1, sizeof da, &da));
	CHECK_CL(clSetKernelArg(kern, 2, sizeof db, &db));
	CHECK_CL(clSetKernelArg(kern, 3, sizeof n, &n));

	double *ms = malloc(sizeof(double) * (size_t)runs);
	for (int i = -1; i < runs; i++) { /* run -1 warms up */
		cl_event ev;
		CHECK_CL(clEnqueueNDRangeKernel(queue, kern, 2, NULL, global, local, 0, NULL, &ev));
		CHECK_CL(clWaitForEvents(1, &ev));
		cl_ulong t0, t1;
		CHECK_CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
		CHECK_CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
		clReleaseEvent(ev);
		if (i >= 0)
			ms[i] = (double)(t1 - t0) / 1e6;
	}
	CHECK_CL(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
	qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
	double median = ms[runs / 2];

	/* 4. Check against a plain reference. */
	double worst = 0, scale = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += (double)a[(size_t)i * n + k] * b[(size_t)k * n + j];
			worst = fmax(worst, fabs(s - c[(size_t)i * n + j]));
			scale = fmax(scale, fabs(s));
		}
	double rel = worst / (scale > 0 ? scale : 1);
	printf("n %d: median %.4f ms over %d runs, %.2f GFLOP/s; max error %.2e of max |C|\n",
	       n, median, runs, 2.0 * n * n * n / (median * 1e6), rel);
	int ok = rel <= 1e-4;
	printf("%s\n", ok ? "ok" : "WRONG RESULT");
	return ok ? 0 : 1;
}
