// Package matmul is a blocked single-precision matrix multiply, the kernel
// of the WebAssembly example: the same code runs natively and compiled to
// wasm, so the two can be compared.
package matmul
