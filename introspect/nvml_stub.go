//go:build !cgo

package introspect

// DiscoverNVIDIA, in a build without cgo, cannot load NVML and says so.
func DiscoverNVIDIA() NVIDIA {
	return NVIDIA{GPUs: []GPU{}, Unavailable: "NVIDIA GPUs unavailable: quasimd was built without cgo, which NVML needs"}
}
