// matmul_harness.cu: an exec harness (docs/kernel-authors/harness-protocol.md) for a tiled
// single-precision matrix multiply C = A*B on an NVIDIA GPU.
//
// Tunable: the thread block shape (block_x, block_y) and how many output
// elements each thread computes along y (work_y). The tile loaded into
// shared memory is block_x wide and block_y*work_y tall; constraints keep
// the block within 1024 threads.
//
// Build where nvcc exists:  nvcc -O3 -o matmul_harness matmul_harness.cu
// Times come from CUDA events around each launch; the checksum is the sum of
// C in double, computed on the host.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#define MAX_TILE 64

template <int WY>
__global__ void matmul(int n, const float *a, const float *b, float *c)
{
	// Tiles: As is (blockDim.y*WY) x blockDim.x, Bs is blockDim.x x blockDim.x.
	extern __shared__ float smem[];
	int bx = blockDim.x, by = blockDim.y;
	float *As = smem;
	float *Bs = smem + by * WY * bx;
	int col = blockIdx.x * bx + threadIdx.x;
	int row0 = blockIdx.y * by * WY + threadIdx.y;
	float acc[WY];
	for (int w = 0; w < WY; w++)
		acc[w] = 0.0f;
	for (int t = 0; t < n; t += bx) {
		for (int w = 0; w < WY; w++) {
			int r = row0 + w * by, k = t + threadIdx.x;
			As[(threadIdx.y + w * by) * bx + threadIdx.x] = (r < n && k < n) ? a[(size_t)r * n + k] : 0.0f;
		}
		for (int k = threadIdx.y; k < bx; k += by) {
			int kk = t + k;
			Bs[k * bx + threadIdx.x] = (kk < n && col < n) ? b[(size_t)kk * n + col] : 0.0f;
		}
		__syncthreads();
		for (int k = 0; k < bx; k++) {
			float bv = Bs[k * bx + threadIdx.x];
			for (int w = 0; w < WY; w++)
				acc[w] += As[(threadIdx.y + w * by) * bx + k] * bv;
		}
		__syncthreads();
	}
	for (int w = 0; w < WY; w++) {
		int r = row0 + w * by;
		if (r < n && col < n)
			c[(size_t)r * n + col] = acc[w];
	}
}

static int num(const char *line, const char *key, double *out)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(line, pat);
	if (!p)
		return -1;
	*out = strtod(p + strlen(pat), NULL);
	return 0;
}

static void fail(double id, const char *cls, const char *msg)
{
	printf("{\"type\":\"result\",\"id\":%.0f,\"error_class\":\"%s\",\"error\":\"%s\"}\n", id, cls, msg);
}

int main()
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	cudaDeviceProp prop;
	if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
		fprintf(stderr, "matmul_harness: no CUDA device\n");
		return 1;
	}
	printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"matmul-cuda\",\"version\":\"1\","
	       "\"device\":\"nvidia/%s\",\"params\":["
	       "{\"name\":\"block_x\",\"values\":[8,16,32,64],\"default\":16},"
	       "{\"name\":\"block_y\",\"values\":[1,2,4,8,16,32],\"default\":16},"
	       "{\"name\":\"work_y\",\"values\":[1,2,4,8],\"default\":1}],"
	       "\"constraints\":[\"block_x * block_y <= 1024\", \"block_y * work_y <= 64\"]}\n",
	       prop.name);
	char line[1 << 16];
	int cur = 0;
	float *da = NULL, *db = NULL, *dc = NULL;
	std::vector<float> hc;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	while (fgets(line, sizeof line, stdin)) {
		if (strstr(line, "\"type\":\"shutdown\""))
			break;
		double id = 0, bx = 16, by = 16, wy = 1, reps = 1, n = 0;
		num(line, "id", &id);
		num(line, "block_x", &bx);
		num(line, "block_y", &by);
		num(line, "work_y", &wy);
		num(line, "repetitions", &reps);
		const char *pr = strstr(line, "\"problem\":[");
		if (pr)
			n = strtod(pr + 11, NULL);
		if (n < 1 || n > 16384) {
			fail(id, "invalid", "problem outside 1..16384");
			continue;
		}
		if ((int)n != cur) {
			cudaFree(da), cudaFree(db), cudaFree(dc);
			cur = (int)n;
			size_t m = (size_t)cur * cur;
			std::vector<float> ha(m), hb(m);
			unsigned x = 12345;
			for (size_t i = 0; i < m; i++) {
				x = x * 1103515245u + 12345u;
				ha[i] = (float)((x >> 8) % 1000) / 1000.0f - 0.5f;
				x = x * 1103515245u + 12345u;
				hb[i] = (float)((x >> 8) % 1000) / 1000.0f - 0.5f;
			}
			if (cudaMalloc(&da, m * 4) != cudaSuccess || cudaMalloc(&db, m * 4) != cudaSuccess ||
			    cudaMalloc(&dc, m * 4) != cudaSuccess) {
				cur = 0;
				fail(id, "runtime", "cudaMalloc failed");
				continue;
			}
			cudaMemcpy(da, ha.data(), m * 4, cudaMemcpyHostToDevice);
			cudaMemcpy(db, hb.data(), m * 4, cudaMemcpyHostToDevice);
			hc.resize(m);
		}
		dim3 block((unsigned)bx, (unsigned)by);
		dim3 grid((cur + (int)bx - 1) / (int)bx, (cur + (int)(by * wy) - 1) / (int)(by * wy));
		size_t shared = ((size_t)(by * wy) * (size_t)bx + (size_t)bx * (size_t)bx) * sizeof(float);
		if (bx * by > prop.maxThreadsPerBlock || shared > prop.sharedMemPerBlock) {
			fail(id, "invalid", "block too large for this device");
			continue;
		}
		int r = reps < 1 ? 1 : (int)reps;
		std::vector<float> times;
		cudaError_t err = cudaSuccess;
		for (int i = 0; i < r && err == cudaSuccess; i++) {
			cudaEventRecord(e0);
			switch ((int)wy) {
			case 1: matmul<1><<<grid, block, shared>>>(cur, da, db, dc); break;
			case 2: matmul<2><<<grid, block, shared>>>(cur, da, db, dc); break;
			case 4: matmul<4><<<grid, block, shared>>>(cur, da, db, dc); break;
			default: matmul<8><<<grid, block, shared>>>(cur, da, db, dc); break;
			}
			cudaEventRecord(e1);
			err = cudaEventSynchronize(e1);
			if (err == cudaSuccess)
				err = cudaGetLastError();
			float ms = 0;
			cudaEventElapsedTime(&ms, e0, e1);
			times.push_back(ms);
		}
		if (err != cudaSuccess) {
			fail(id, "runtime", cudaGetErrorString(err));
			continue;
		}
		cudaMemcpy(hc.data(), dc, hc.size() * 4, cudaMemcpyDeviceToHost);
		double sum = 0;
		for (float v : hc)
			sum += v;
		printf("{\"type\":\"result\",\"id\":%.0f,\"times_ms\":[", id);
		for (size_t i = 0; i < times.size(); i++)
			printf("%s%.6f", i ? "," : "", times[i]);
		printf("],\"checksum\":%.17g}\n", sum);
	}
	cudaFree(da), cudaFree(db), cudaFree(dc);
	return 0;
}
