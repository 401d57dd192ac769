package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"toxgate/plugins/contract"
)

// readyWait is how long one call of contract.ActionReady may wait in the
// plugin before it answers 503 and the host asks again.
const readyWait = 20 * time.Second

// declaresReady reports whether a plugin loads after its handshake: its
// manifest declares contract.ActionReady.
func declaresReady(m *contract.Manifest) bool {
	for _, a := range m.Actions {
		if a.Name == contract.ActionReady {
			return true
		}
	}
	return false
}

// awaitLoad calls contract.ActionReady on inst until it answers 200 (then
// inst is ready), the call fails (the process died), inst is retired, or
// ctx ends. Each call waits in the plugin until it has loaded or the
// call's deadline, so the host learns of the load as it happens without
// polling.
func (m *managed) awaitLoad(ctx context.Context, inst *instance) error {
	for {
		if inst.isReady() {
			return nil
		}
		select {
		case <-inst.gone:
			return errors.New("process retired while loading")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		dl := time.Now().Add(readyWait)
		if d, ok := ctx.Deadline(); ok && d.Before(dl) {
			dl = d
		}
		cctx, cancel := context.WithDeadline(ctx, dl.Add(5*time.Second))
		resp, err := inst.rpc.Call(cctx, &contract.Request{Action: contract.ActionReady, Method: "GET", Deadline: dl})
		cancel()
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: %w", contract.ActionReady, err)
		case resp.Status == 200:
			inst.setReady()
			return nil
		case resp.Status != 503:
			return fmt.Errorf("%s answered %d", contract.ActionReady, resp.Status)
		}
	}
}
