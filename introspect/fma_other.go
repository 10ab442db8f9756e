//go:build !amd64

package introspect

func fmaKernel() (name string, flopsPerIter float64, loop func(int64) float32) {
	return scalarKernel()
}
