// Package wasmbin reads and writes the WebAssembly binary format for the two
// programs of toxgate that rewrite modules: the module build's rewriter
// (internal/reloop) and the host's fuel instrumentation
// (gateway/modulehost/wasmrt). It holds one file per concern: LEB128
// integers (leb128.go), the module's sections (section.go), opcodes and
// types by name (opcode.go) and an instruction reader (instr.go).
//
// It decodes, it does not validate: wazero validates a module when it
// compiles it.
package wasmbin
