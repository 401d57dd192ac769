// Package reloop rewrites the WebAssembly that Go's compiler emits
// (GOOS=wasip1 GOARCH=wasm) so that jumps inside a function are direct
// branches instead of trips through a jump table.
//
// Go's wasm back end compiles every function with more than one basic block
// into a dispatch loop:
//
//	loop
//	  block ... block            ;; one per basic block
//	    local.get 0              ;; PC_B: the basic block to run
//	    br_table ...
//	  end  <basic block 0>
//	  end  <basic block 1>       ;; a jump is: i32.const pc; local.set 0; br <loop>
//	  ...
//	end
//
// so every taken branch, the back edge of every loop included, is an indirect
// jump through the br_table, and an optimising wasm compiler sees one loop with
// every basic block as a predecessor of its header. The same table lets a
// goroutine that unwound the wasm stack resume in the middle of a function:
// the runtime calls the function again with PC_B naming the resume point.
//
// Module keeps Go's dispatch loop for resuming and puts in front of it a second
// copy of the function's code, entered on every ordinary call (PC_B = 0), in
// which the basic blocks are laid out as nested blocks and loops along the
// dominator tree (Ramsey, "Beyond Relooper", ICFP 2022) and every jump is a br
// to the right label. Both copies run the same instructions on the same Go
// stack, so a call that unwinds in the fast copy resumes correctly in the slow
// one. Functions of any other shape (the runtime's assembly, irreducible
// control flow) are left as they are.
//
// Finish is the last step of a build, after binaryen's optimiser: it rewrites
// shapes that make wazero check the bounds of memory accesses it could know
// to be safe (see finish.go).
package reloop

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"

	"toxgate/internal/wasmbin"
	"toxgate/sdk/abi"
)

// Stats says what Module did.
type Stats struct {
	Functions int // function bodies in the module
	Rewritten int // bodies given a structured copy
	Jumps     int // jumps made direct
	// SlowJumps counts the edges of structured copies that still go through
	// Go's dispatch loop (where the control flow is irreducible).
	SlowJumps int
	// SlowJumpsByBody gives SlowJumps per body (by index in the code section).
	SlowJumpsByBody map[int]int
	Skipped         int // bodies with a dispatch loop that were left as they are
	// SkippedBodies lists the skipped bodies: their index in the code section
	// (function index minus the number of imported functions) and why.
	SkippedBodies []Skip
	// Already is set when the module carries the marker of an earlier
	// rewrite; it is then returned as it is.
	Already  bool
	InBytes  int // size of the module read
	OutBytes int // size of the module written
}

// Module returns the module wasm with the functions of Go's shape rewritten.
// It changes only the code section and appends a custom section naming the
// rewrite; the others are copied byte for byte.
func Module(wasm []byte) ([]byte, Stats, error) {
	st := Stats{InBytes: len(wasm)}
	if !wasmbin.HasHeader(wasm) {
		return nil, st, errors.New("reloop: not a WebAssembly 1.0 module")
	}
	secs, err := wasmbin.Sections(wasm)
	if err != nil {
		return nil, st, fmt.Errorf("reloop: %w", err)
	}
	out := make([]byte, 0, len(wasm)*2)
	out = append(out, wasm[:8]...)
	imported := 0
	for _, sec := range secs {
		if sec.ID == wasmbin.SectionCustom && customNamed(sec.Payload, abi.ReloopSection) {
			st.Already, st.OutBytes = true, len(wasm)
			return wasm, st, nil
		}
		if sec.ID == wasmbin.SectionImport {
			if imported, err = importedFuncs(sec.Payload); err != nil {
				return nil, st, fmt.Errorf("reloop: import section: %w", err)
			}
		}
		if sec.ID != wasmbin.SectionCode {
			out = append(out, sec.Whole...)
			continue
		}
		code, err := rewriteCode(sec.Payload, imported, &st)
		if err != nil {
			return nil, st, err
		}
		out = wasmbin.AppendSection(out, sec.ID, code)
	}
	if st.Rewritten == 0 {
		out = wasm // nothing changed: the input as it was, byte for byte
	} else {
		marker := wasmbin.AppendUint32(nil, uint32(len(abi.ReloopSection)))
		marker = append(marker, abi.ReloopSection...)
		marker = append(marker, '1') // the format of the rewrite
		out = wasmbin.AppendUint32(append(out, 0), uint32(len(marker)))
		out = append(out, marker...)
	}
	st.OutBytes = len(out)
	return out, st, nil
}

// rewriteCode rewrites the payload of a code section; imported is the number
// of imported functions, which come before the bodies in the index space.
func rewriteCode(b []byte, imported int, st *Stats) ([]byte, error) {
	bodies, err := wasmbin.CodeBodies(b)
	if err != nil {
		return nil, fmt.Errorf("reloop: %w", err)
	}
	noret := make([]bool, len(bodies))
	for fn, body := range bodies {
		if _, p, err := localTypes(body); err == nil {
			noret[fn] = noReturn(body[p:])
		}
	}
	isNoret := func(f int64) bool {
		f -= int64(imported)
		return f >= 0 && f < int64(len(noret)) && noret[f]
	}
	out := make([][]byte, len(bodies))
	for fn, body := range bodies {
		st.Functions++
		slow := st.SlowJumps
		nb, why, err := rewriteBody(body, isNoret, st)
		if st.SlowJumps > slow {
			if st.SlowJumpsByBody == nil {
				st.SlowJumpsByBody = map[int]int{}
			}
			st.SlowJumpsByBody[fn] = st.SlowJumps - slow
		}
		if why != "" {
			st.SkippedBodies = append(st.SkippedBodies, Skip{Body: fn, Reason: why})
		}
		if err != nil {
			return nil, fmt.Errorf("reloop: body %d: %w", fn, err)
		}
		out[fn] = nb
	}
	return wasmbin.AppendBodies(make([]byte, 0, len(b)*2), out), nil
}

// customNamed reports whether a custom section's payload starts with name.
func customNamed(payload []byte, name string) bool {
	got, ok := wasmbin.CustomName(payload)
	return ok && got == name
}

// Skip is a function body that Module left as it was.
type Skip struct {
	Body   int
	Reason string
}

// rewriteBody returns body (locals and expression) rewritten, or body itself
// and the reason when it has a dispatch loop but is not of Go's shape.
func rewriteBody(body []byte, noret func(int64) bool, st *Stats) (out []byte, why string, err error) {
	_, p, err := localTypes(body)
	if err != nil {
		return nil, "", err
	}
	f, err := parseGoFunc(body[p:], noret)
	if err != nil && !errors.Is(err, errShape) {
		// Code reloop cannot decode (an instruction Go does not emit): leave it.
		st.Skipped++
		return body, "cannot decode: " + err.Error(), nil
	}
	if err == nil {
		var expr []byte
		if expr, err = f.rewrite(); err == nil {
			st.Rewritten++
			st.Jumps += f.direct
			st.SlowJumps += f.slow
			return append(body[:p:p], expr...), "", nil
		}
	}
	switch {
	case errors.Is(err, errNoLoop):
		return body, "", nil
	case errors.Is(err, errShape):
		st.Skipped++
		return body, err.Error(), nil
	}
	return nil, "", err
}

//go:embed *.go
var sources embed.FS

// SourceDigest returns the hex SHA-256 of this package's source files and of
// the decoder's (internal/wasmbin), so that caches of rewritten modules can
// tell when reloop changed.
func SourceDigest() string {
	h := sha256.New()
	fmt.Fprintf(h, "wasmbin %s\n", wasmbin.SourceDigest())
	entries, _ := sources.ReadDir(".")
	for _, e := range entries {
		b, _ := sources.ReadFile(e.Name())
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
