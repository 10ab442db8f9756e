package introspect

import "golang.org/x/sys/cpu"

// fmaLoopAVX512 runs n iterations of 12 independent 16-lane float32 FMAs
// (384 flops each) and returns a lane of the sum, so none is dead code.
//
//go:noescape
func fmaLoopAVX512(n int64) float32

// fmaLoopAVX2 is fmaLoopAVX512 with 8 lanes (192 flops an iteration).
//
//go:noescape
func fmaLoopAVX2(n int64) float32

// fmaKernel picks the widest FMA loop this CPU and OS run.
func fmaKernel() (name string, flopsPerIter float64, loop func(int64) float32) {
	switch {
	case cpu.X86.HasAVX512F:
		return "avx512 fma, 16 float32 lanes", 384, fmaLoopAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return "avx2 fma, 8 float32 lanes", 192, fmaLoopAVX2
	}
	return scalarKernel()
}
