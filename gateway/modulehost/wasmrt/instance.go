package wasmrt

import (
	"context"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"toxgate/sdk/abi"
)

// instance is one instantiation of a module; it serves one call at a time.
type instance struct {
	mod         api.Module
	alloc, eval api.Function
	out         *capWriter
}

// newInstance instantiates the compiled module anonymously, with no file
// system, environment, arguments or host clock, and runs _initialize.
func (m *Module) newInstance(ctx context.Context) (*instance, error) {
	out := &capWriter{limit: 8 << 10}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(abi.ExportInitialize).
		WithStdout(out).
		WithStderr(out)
	if reserve != nil {
		ctx = experimental.WithMemoryAllocator(ctx, reserve)
	}
	mod, err := m.rt.InstantiateModule(ctx, m.cm, cfg)
	if err != nil {
		if s := out.String(); s != "" {
			return nil, refuse(err, "instantiation failed; guest wrote %q", s)
		}
		return nil, err
	}
	inst := &instance{mod: mod, out: out}
	inst.bind()
	return inst, nil
}

func (in *instance) bind() {
	in.alloc = in.mod.ExportedFunction(abi.ExportAlloc)
	in.eval = in.mod.ExportedFunction(abi.ExportEvaluate)
}

func (in *instance) close(ctx context.Context) { in.mod.Close(context.WithoutCancel(ctx)) }

// nearMemoryCap reports whether the instance's memory is within 1/8 of the cap.
func (in *instance) nearMemoryCap(pages uint32) bool {
	mem := in.mod.Memory()
	if mem == nil {
		return false
	}
	return uint64(mem.Size())*8 >= uint64(pages)*65536*7
}

// pool bounds the instances of a module: slots holds one token per live (or
// starting) instance, idle the instances waiting for a call.
type pool struct {
	idle  chan *instance
	slots chan struct{}
}

func newPool(size int) pool {
	return pool{idle: make(chan *instance, size), slots: make(chan struct{}, size)}
}

// get returns an idle instance, or starts one if the pool is not full, or waits
// for one until ctx is done.
func (p *pool) get(ctx context.Context, start func(context.Context) (*instance, error)) (*instance, error) {
	select {
	case in := <-p.idle:
		return in, nil
	default:
	}
	select {
	case in := <-p.idle:
		return in, nil
	case p.slots <- struct{}{}:
		in, err := start(ctx)
		if err != nil {
			<-p.slots
			return nil, err
		}
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pool) put(in *instance) { p.idle <- in }

// closeIdle closes every idle instance (all of them when no call runs).
func (p *pool) closeIdle(ctx context.Context) {
	for {
		select {
		case in := <-p.idle:
			p.discard(ctx, in)
		default:
			return
		}
	}
}

func (p *pool) discard(ctx context.Context, in *instance) {
	in.close(ctx)
	<-p.slots
}

// capWriter keeps the first limit bytes written to it (guest stdout/stderr).
type capWriter struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

func (w *capWriter) reset() {
	w.mu.Lock()
	w.buf = w.buf[:0]
	w.mu.Unlock()
}
