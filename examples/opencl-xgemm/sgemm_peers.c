/*
 * sgemm_peers: single-precision C = A*B (n x n x n, row-major) three ways
 * on this machine, to put a tuned Xgemm beside the libraries people call:
 *
 *   clblast   the CLBlast library's CLBlastSgemm (Debian's libclblast1),
 *             with the parameters CLBlast ships for this device (its
 *             database; a device it does not know gets its defaults)
 *   openblas  OpenBLAS's cblas_sgemm on the CPU (all its threads)
 *   xgemm     CLBlast's Xgemm kernel alone, built with -D options given
 *             here (a config quasim tuned: quasim_defines or
 *             `quasimctl config xgemm`), timed with profiling events as
 *             quasim and CLBlast's tuner time it. It needs its inputs in
 *             the layout the library's pre-processing makes, so it is the
 *             kernel's time, not a whole sgemm: the library's figure
 *             includes its own copies and launches.
 *
 * Each is run once to warm up, then -r times; the median is reported in
 * ms and GFLOP/s (2n^3 flops). CLBlast's result is checked against
 * OpenBLAS's. OpenBLAS goes last at each size, and a second's pause
 * after it: its threads spin a while after a call, which would slow
 * whatever ran next on the same cores.
 *
 * Build (Debian: libclblast-dev libopenblas-dev ocl-icd-opencl-dev):
 *   cc -O2 -std=c99 -o sgemm_peers sgemm_peers.c -lclblast -lopenblas -lOpenCL -lm
 * Run:
 *   ./sgemm_peers -n 256,512,1024 [-r 10] [-k common.opencl -D "-DMWG=64 ..."]
 */
#define CL_TARGET_OPENCL_VERSION 120
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <clblast_c.h>
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n) {
	qsort(v, n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, int code) {
	fprintf(stderr, "sgemm_peers: %s failed: %d\n", what, code);
	exit(1);
}

/* defval reads NAME=V from an option string of -DNAME=V. */
static int defval(const char *defs, const char *name, int *v) {
	char key[64];
	snprintf(key, sizeof key, "-D%s=", name);
	const char *p = strstr(defs, key);
	if (!p)
		return 0;
	*v = atoi(p + strlen(key));
	return 1;
}

static char *readfile(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc(n + 1);
	if (fread(s, 1, n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	s[n] = 0;
	fclose(f);
	return s;
}

int main(int argc, char **argv) {
	const char *sizes = "256,512,1024", *kfile = NULL, *defs = NULL;
	int reps = 10;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			sizes = argv[i + 1];
		else if (!strcmp(argv[i], "-r"))
			reps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-k"))
			kfile = argv[i + 1];
		else if (!strcmp(argv[i], "-D"))
			defs = argv[i + 1];
		else {
			fprintf(stderr, "usage: %s [-n 256,512,1024] [-r 10] [-k common.opencl -D \"-DMWG=64 ...\"]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || (kfile == NULL) != (defs == NULL)) {
		fprintf(stderr, "sgemm_peers: -r must be positive, and -k and -D go together\n");
		return 2;
	}
	cl_int err;
	cl_platform_id plat;
	cl_device_id dev;
	if ((err = clGetPlatformIDs(1, &plat, NULL)) != CL_SUCCESS)
		die("clGetPlatformIDs", err);
	if ((err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) != CL_SUCCESS)
		die("clGetDeviceIDs", err);
	char name[256];
	clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	if (err != CL_SUCCESS)
		die("clCreateContext", err);
	cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
	if (err != CL_SUCCESS)
		die("clCreateCommandQueue", err);

	cl_kernel xk = NULL;
	int mwg = 0, nwg = 0, mdimc = 0, ndimc = 0;
	if (kfile) {
		if (!defval(defs, "MWG", &mwg) || !defval(defs, "NWG", &nwg) || !defval(defs, "MDIMC", &mdimc) || !defval(defs, "NDIMC", &ndimc)) {
			fprintf(stderr, "sgemm_peers: -D must give MWG, NWG, MDIMC and NDIMC\n");
			return 2;
		}
		const char *src = readfile(kfile);
		cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
		if (err != CL_SUCCESS)
			die("clCreateProgramWithSource", err);
		if ((err = clBuildProgram(prog, 1, &dev, defs, NULL, NULL)) != CL_SUCCESS) {
			char log[8192];
			clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
			fprintf(stderr, "%s\n", log);
			die("clBuildProgram", err);
		}
		xk = clCreateKernel(prog, "Xgemm", &err);
		if (err != CL_SUCCESS)
			die("clCreateKernel Xgemm", err);
	}
	printf("device: %s; OpenBLAS: %s; %d runs each, median\n", name, openblas_get_config(), reps);
	printf("%6s  %-9s %10s %9s  %s\n", "n", "sgemm", "ms", "GFLOP/s", "note");

	double *t = malloc(reps * sizeof *t);
	for (const char *p = sizes; *p;) {
		int n = atoi(p);
		p = strchr(p, ',') ? strchr(p, ',') + 1 : p + strlen(p);
		if (n <= 0)
			continue;
		size_t nn = (size_t)n * n, bytes = nn * sizeof(float);
		float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *ref = malloc(bytes);
		srand(1);
		for (size_t i = 0; i < nn; i++) {
			a[i] = rand() / (float)RAND_MAX;
			b[i] = rand() / (float)RAND_MAX;
		}
		double gf = 2.0 * n * n * n / 1e6; /* GFLOP/s = gf / ms */


		cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
		cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
		cl_mem dc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
		if (err != CL_SUCCESS)
			die("clCreateBuffer", err);
		for (int r = -1; r < reps; r++) {
			double t0 = now_ms();
			CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
			                                   da, 0, n, db, 0, n, 0.0f, dc, 0, n, &q, NULL);
			if (s != CLBlastSuccess)
				die("CLBlastSgemm", s);
			clFinish(q);
			if (r >= 0)
				t[r] = now_ms() - t0;
		}
		clEnqueueReadBuffer(q, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL);
		double clblast_ms = median(t, reps);

		if (xk) {
			if (n % mwg || n % nwg) {
				printf("%6d  %-9s %10s %9s  n is not a multiple of MWG=%d and NWG=%d\n", n, "xgemm", "-", "-", mwg, nwg);
			} else {
				int m_ = n, n_ = n, k_ = n, zero = 0;
				float alpha = 1, beta = 0;
				void *args[][2] = {{&m_, (void *)sizeof(int)}, {&n_, (void *)sizeof(int)}, {&k_, (void *)sizeof(int)},
				                   {&alpha, (void *)sizeof(float)}, {&beta, (void *)sizeof(float)}, {&da, (void *)sizeof(cl_mem)},
				                   {&db, (void *)sizeof(cl_mem)}, {&dc, (void *)sizeof(cl_mem)}, {&zero, (void *)sizeof(int)},
				                   {&zero, (void *)sizeof(int)}};
				for (cl_uint i = 0; i < 10; i++)
					if ((err = clSetKernelArg(xk, i, (size_t)args[i][1], args[i][0])) != CL_SUCCESS)
						die("clSetKernelArg", err);
				size_t global[2] = {(size_t)n / mwg * mdimc, (size_t)n / nwg * ndimc}, local[2] = {mdimc, ndimc};
				for (int r = -1; r < reps; r++) {
					cl_event ev;
					if ((err = clEnqueueNDRangeKernel(q, xk, 2, NULL, global, local, 0, NULL, &ev)) != CL_SUCCESS)
						die("clEnqueueNDRangeKernel Xgemm", err);
					clWaitForEvents(1, &ev);
					cl_ulong t0, t1;
					clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
					clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
					clReleaseEvent(ev);
					if (r >= 0)
						t[r] = (t1 - t0) / 1e6;
				}
				double ms = median(t, reps);
				printf("%6d  %-9s %10.4f %9.1f  the Xgemm kernel alone with %s (profiling events)\n", n, "xgemm", ms, gf / ms, defs);
			}
		}
		clReleaseMemObject(da);
		clReleaseMemObject(db);
		clReleaseMemObject(dc);

		/* OpenBLAS last: its threads spin for a while after a call, which
		 * would slow the OpenCL runs that came after it. */
		for (int r = -1; r < reps; r++) {
			double t0 = now_ms();
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, ref, n);
			if (r >= 0)
				t[r] = now_ms() - t0;
		}
		double blas_ms = median(t, reps), maxrel = 0;
		for (size_t i = 0; i < nn; i++)
			maxrel = fmax(maxrel, fabs(c[i] - ref[i]) / fmax(fabs(ref[i]), 1e-6));
		printf("%6d  %-9s %10.4f %9.1f  cblas_sgemm\n", n, "openblas", blas_ms, gf / blas_ms);
		printf("%6d  %-9s %10.4f %9.1f  CLBlastSgemm, wall time to clFinish; max rel. difference from OpenBLAS %.1e\n", n, "clblast", clblast_ms, gf / clblast_ms, maxrel);
		sleep(1);
		free(a), free(b), free(c), free(ref);
	}
	free(t);
	return 0;
}
