// Package wasm is the wasm evaluator: it measures a kernel compiled to
// WebAssembly, run in-process by wazero, through the ABI of
// docs/wasm-abi.md. The module is compiled once; an instance is reused
// until it traps, and then discarded.
package wasm
