//go:build wasip1

// Command wasm-kernel is the matmul kernel as a WebAssembly module for
// quasim's wasm evaluator (docs/kernel-authors/wasm-abi.md). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o matmul.wasm ./examples/wasm-kernel
package main

import (
	"unsafe"

	"github.com/quasim/quasim/examples/wasm-kernel/matmul"
)

const params = `{"name":"matmul-wasm","version":"1","params":[` +
	`{"name":"block_i","values":[8,16,32,64],"default":8},` +
	`{"name":"block_j","values":[8,16,32,64],"default":8},` +
	`{"name":"block_k","values":[8,16,32,64],"default":8},` +
	`{"name":"ikj","values":[0,1],"default":0}]}`

var (
	buf     []int64
	n       int
	a, b, c []float32
	cfg     [4]int
)

//go:wasmexport quasim_abi
func abi() int32 { return 1 }

// quasim_params returns the address and length of the declaration.
//
//go:wasmexport quasim_params
func paramsPtr() int64 {
	return int64(uintptr(unsafe.Pointer(unsafe.StringData(params))))<<32 | int64(len(params))
}

// quasim_buffer returns room for n int64 inputs.
//
//go:wasmexport quasim_buffer
func buffer(size int32) int32 {
	buf = make([]int64, size)
	return int32(uintptr(unsafe.Pointer(&buf[0])))
}

// quasim_setup reads the config (value per parameter) and the problem from
// the buffer and prepares the inputs: 0 on success, 1 for an invalid
// config, 2 for a failure.
//
//go:wasmexport quasim_setup
func setup(nparams, ndims int32) int32 {
	if nparams != 4 || ndims != 1 || len(buf) < 5 {
		return 1
	}
	for i := range cfg {
		cfg[i] = int(buf[i])
	}
	if size := int(buf[4]); size != n {
		if size < 1 || size > 2048 {
			return 1
		}
		n = size
		a, b = matmul.Inputs(n)
		c = make([]float32, n*n)
	}
	return 0
}

//go:wasmexport quasim_run
func run() int32 {
	matmul.Multiply(n, a, b, c, cfg[0], cfg[1], cfg[2], cfg[3] == 1)
	return 0
}

//go:wasmexport quasim_checksum
func checksum() float64 { return matmul.Checksum(c) }

func main() {}
