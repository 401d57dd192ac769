package modulehost

import (
	"context"
	"sync"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/modulehost/modelapi"
)

// metadataCaller is the caller key under which the host runs a route's
// example to learn its output tensors: a background caller (free slots
// only, after every interactive call).
const metadataCaller = modelapi.BackgroundPrefix + "oip-metadata"

// outputMeta keeps, per route of one loaded module, the output tensors an
// infer call returns (a replaced module is a new entry and learns afresh).
type outputMeta struct {
	mu      sync.Mutex
	byRoute map[int][]TensorMetadata
}

// routeOutputs is the output tensors of route idx of e as an infer call
// gives them: those of the route's example answer (outputTensors, the
// function ServeInfer uses), each list dimension -1; for a route without
// an example, the top-level properties of its output schema; else one
// BYTES tensor "output". The example runs once per module, through the
// response cache, as a background caller; a failed run is tried again on
// the next request.
func (h *Host) routeOutputs(ctx *fasthttp.RequestCtx, e *entry, idx int) []TensorMetadata {
	e.meta.mu.Lock()
	defer e.meta.mu.Unlock()
	if ts, ok := e.meta.byRoute[idx]; ok {
		return ts
	}
	rt := e.mod.Manifest().Routes[idx]
	keep := true
	ts := tensors(rt.Output.Schema)
	if len(rt.Example) > 0 {
		keep = false
		out, _, cerr, retired := h.invokeOn(context.WithoutCancel(ctx), route{e: e, idx: idx}, Caller{Key: metadataCaller}, rt.Example)
		if cerr == nil && !retired {
			if ots, err := outputTensors(out, rt.Batch); err == nil {
				ts, keep = make([]TensorMetadata, len(ots)), true
				for i, t := range ots {
					ts[i] = TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
					if t.list {
						ts[i].Shape = make([]int64, len(t.Shape))
						for d := range ts[i].Shape {
							ts[i].Shape[d] = -1
						}
					}
				}
			}
		}
	}
	if len(ts) == 0 {
		ts = []TensorMetadata{{Name: "output", Datatype: "BYTES", Shape: []int64{-1}}}
	}
	if keep {
		if e.meta.byRoute == nil {
			e.meta.byRoute = map[int][]TensorMetadata{}
		}
		e.meta.byRoute[idx] = ts
	}
	return ts
}
