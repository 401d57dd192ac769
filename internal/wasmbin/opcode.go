package wasmbin

// Opcodes by name (core specification 5.4; the exception-handling, tail-call
// and threads proposals for the ones marked so).
const (
	OpUnreachable        byte = 0x00
	OpNop                byte = 0x01
	OpBlock              byte = 0x02
	OpLoop               byte = 0x03
	OpIf                 byte = 0x04
	OpElse               byte = 0x05
	OpTry                byte = 0x06 // exception handling (legacy)
	OpCatch              byte = 0x07 // exception handling (legacy)
	OpThrow              byte = 0x08 // exception handling
	OpRethrow            byte = 0x09 // exception handling (legacy)
	OpThrowRef           byte = 0x0a // exception handling
	OpEnd                byte = 0x0b
	OpBr                 byte = 0x0c
	OpBrIf               byte = 0x0d
	OpBrTable            byte = 0x0e
	OpReturn             byte = 0x0f
	OpCall               byte = 0x10
	OpCallIndirect       byte = 0x11
	OpReturnCall         byte = 0x12 // tail calls
	OpReturnCallIndirect byte = 0x13 // tail calls
	OpDelegate           byte = 0x18 // exception handling (legacy)
	OpCatchAll           byte = 0x19 // exception handling (legacy)
	OpDrop               byte = 0x1a
	OpSelect             byte = 0x1b
	OpSelectT            byte = 0x1c
	OpTryTable           byte = 0x1f // exception handling
	OpLocalGet           byte = 0x20
	OpLocalSet           byte = 0x21
	OpLocalTee           byte = 0x22
	OpGlobalGet          byte = 0x23
	OpGlobalSet          byte = 0x24
	OpTableGet           byte = 0x25
	OpTableSet           byte = 0x26
	OpFirstLoadStore     byte = 0x28 // i32.load; loads and stores run to OpLastLoadStore
	OpLastLoadStore      byte = 0x3e // i64.store32
	OpMemorySize         byte = 0x3f
	OpMemoryGrow         byte = 0x40
	OpI32Const           byte = 0x41
	OpI64Const           byte = 0x42
	OpF32Const           byte = 0x43
	OpF64Const           byte = 0x44
	OpI32Eqz             byte = 0x45 // the first numeric instruction without immediates
	OpI32Add             byte = 0x6a
	OpI32Sub             byte = 0x6b
	OpLastNumeric        byte = 0xc4 // i64.extend32_s, the last one without immediates
	OpRefNull            byte = 0xd0
	OpRefIsNull          byte = 0xd1
	OpRefFunc            byte = 0xd2
	PrefixMisc           byte = 0xfc // saturating truncation, bulk memory, tables
	PrefixSIMD           byte = 0xfd
	PrefixAtomic         byte = 0xfe // threads
)

// Sub-opcodes of PrefixAtomic with an operand other than a memarg.
const AtomicFence = 0x03

// Types.
const (
	BlockEmpty byte = 0x40 // the block type [] -> []
	FuncType   byte = 0x60 // the form of a function type in the type section
	I32        byte = 0x7f
	I64        byte = 0x7e
	F32        byte = 0x7d
	F64        byte = 0x7c
	V128       byte = 0x7b
	FuncRef    byte = 0x70
	ExternRef  byte = 0x6f
)

// IsValType reports whether t is one of the single-byte value types of
// WebAssembly 2.0.
func IsValType(t byte) bool {
	switch t {
	case I32, I64, F32, F64, V128, FuncRef, ExternRef:
		return true
	}
	return false
}

// Kinds of imports and exports.
const (
	KindFunc   byte = 0x00
	KindTable  byte = 0x01
	KindMemory byte = 0x02
	KindGlobal byte = 0x03
	KindTag    byte = 0x04 // exception handling
)
