//go:build !linux

package opencl

import "os"

// mapFile reads path (mapfile_linux.go maps it instead).
func mapFile(path string) ([]byte, error) { return os.ReadFile(path) }
