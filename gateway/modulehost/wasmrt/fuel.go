package wasmrt

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// Fuel: how the host stops a runaway call cheaply. At load, instrumentFuel
// (fuelmodule.go) rewrites the module once: a mutable i32 global, the fuel,
// is decremented at the entry of every function that calls another and once
// per loopBatch iterations of a loop, counted in a local of the function on
// the branches back to the loop (fuelcode.go); when the fuel reaches zero
// the code calls the added import fuelModule.fuelName, refuel below, which
// ends the call once its context is done. Modules it cannot rewrite run with
// wazero's WithCloseOnContextDone instead. The reasons for each choice are in
// gateway/modulehost/RATIONALE.md ("Why fuel checks on back edges?").

const (
	fuelModule = "toxgate_host"
	fuelName   = "fuel"
	// fuelRefill is the number of loop iterations and calls between two checks.
	fuelRefill = 1 << 14
	// loopBatch is the number of loop iterations counted in a function's local
	// before the fuel global is decremented once.
	loopBatch = 128
	// loopStep is what an iteration adds to the counter: the i32 wraps to 0
	// every loopBatch iterations, so the count needs no comparison and no
	// reset.
	loopStep = 1 << 32 / loopBatch
)

var errFuelUnsupported = errors.New("wasmrt: module not instrumentable")

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errFuelUnsupported, fmt.Sprintf(format, args...))
}

// refuel implements the fuel import: it ends the call when its context is done
// (deadline passed, canceled) or the module was closed, and otherwise returns
// the next amount of fuel. The deadline is compared with the clock, so a call
// stops even when the timer goroutine cannot run.
func refuel(ctx context.Context, mod api.Module, stack []uint64) {
	var code uint32
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		code = sys.ExitCodeDeadlineExceeded
	} else if err := ctx.Err(); err != nil {
		code = sys.ExitCodeContextCanceled
		if errors.Is(err, context.DeadlineExceeded) {
			code = sys.ExitCodeDeadlineExceeded
		}
	} else if !mod.IsClosed() {
		stack[0] = fuelRefill
		return
	}
	_ = mod.CloseWithExitCode(ctx, code)
	panic(sys.NewExitError(code))
}
