//go:build wasip1

// testkernel is a wasm kernel for tests: config mode picks how it behaves
// (ok, panic, slow, oom, invalid, hang: a run that returns only after a
// second, nan: a NaN checksum, spin: a run that never returns); n is the
// checksum otherwise.
package main

import (
	"math"
	"time"
	"unsafe"
)

const params = `{"name":"testkernel","version":"1","params":[` +
	`{"name":"mode","values":["ok","panic","slow","oom","invalid","hang","nan","spin"],"default":"ok"},` +
	`{"name":"n","values":[1,2],"default":1}]}`

var (
	buf   []int64
	mode  int64
	n     int64
	keep  [][]byte
	spins uint64
)

//go:wasmexport quasim_abi
func abi() int32 { return 1 }

//go:wasmexport quasim_params
func paramsPtr() int64 {
	return int64(uintptr(unsafe.Pointer(unsafe.StringData(params))))<<32 | int64(len(params))
}

//go:wasmexport quasim_buffer
func buffer(size int32) int32 {
	buf = make([]int64, size)
	return int32(uintptr(unsafe.Pointer(&buf[0])))
}

//go:wasmexport quasim_setup
func setup(nparams, ndims int32) int32 {
	mode, n = buf[0], buf[1]
	if mode == 4 {
		return 1
	}
	return 0
}

//go:wasmexport quasim_run
func run() int32 {
	switch mode {
	case 1:
		panic("testkernel: panicking as asked")
	case 2:
		for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		}
	case 3:
		for {
			keep = append(keep, make([]byte, 16<<20))
		}
	case 5:
		for start := time.Now(); time.Since(start) < time.Second; {
		}
	case 7:
		for {
			spins++
		}
	}
	return 0
}

//go:wasmexport quasim_checksum
func checksum() float64 {
	if mode == 6 {
		return math.NaN()
	}
	return float64(n)
}

func main() {}
