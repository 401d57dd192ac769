package wasmrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"toxgate/gateway/modulehost/modtest"
	"toxgate/sdk/abi"
)

// cache is shared by the tests: a Go module takes seconds to compile.
var cache = wazero.NewCompilationCache()

func load(t *testing.T, dir string, opts Options) *Module {
	t.Helper()
	opts.Cache = cache
	m, err := Load(context.Background(), modtest.Wasm(t, dir), opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	t.Cleanup(func() { m.Retire(context.Background()) })
	return m
}

func route(t *testing.T, m *Module, path string) int {
	for i, r := range m.Manifest().Routes {
		if r.Path == path {
			return i
		}
	}
	t.Fatalf("no route %s", path)
	return -1
}

func call(t *testing.T, m *Module, path, input string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return m.Call(ctx, route(t, m, path), []byte(input))
}

func failureKind(err error) FailureKind {
	var f *Failure
	if errors.As(err, &f) {
		return f.Kind
	}
	return ""
}

func TestLoadReadsManifestAndResolvesLimits(t *testing.T) {
	m := load(t, "../testdata/faults", Options{})
	if got := m.Manifest(); got.Name != "faults" || got.Version != "1.0.0" || len(got.Routes) != 8 {
		t.Fatalf("manifest = %+v", got)
	}
	l := m.Limits()
	if l.MemoryPages != 128 || l.TimeoutMS != 1000 || l.PoolSize != 4 || l.MaxInputBytes != 4096 {
		t.Fatalf("limits = %+v, want the manifest's", l)
	}
	if len(m.SHA256()) != 64 {
		t.Fatalf("sha256 = %q", m.SHA256())
	}
}

func TestLoadRefusesWithReason(t *testing.T) {
	cases := []struct {
		name string
		wasm func(t *testing.T) []byte
		opts Options
		want string
	}{
		{"garbage", func(*testing.T) []byte { return []byte("not wasm at all") }, Options{}, "not a valid WebAssembly module"},
		{"unknown ABI", func(t *testing.T) []byte { return modtest.Wasm(t, "../testdata/abiv2") }, Options{}, "ABI version 2; this host supports version 1"},
		{"bad manifest", func(t *testing.T) []byte { return modtest.Wasm(t, "../testdata/badmanifest") }, Options{}, `manifest.version: "one" is not a semantic version`},
		{"limit above ceiling", func(t *testing.T) []byte { return modtest.Wasm(t, "../testdata/faults") },
			Options{Max: abi.Limits{MemoryPages: 100}}, "memory_pages: asks for 128 pages, the host allows at most 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Cache = cache
			_, err := Load(context.Background(), c.wasm(t), c.opts)
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load error = %v, want a LoadError containing %q", err, c.want)
			}
		})
	}
}

func TestCallAnswersAndReturnsTypedGuestErrors(t *testing.T) {
	m := load(t, "../testdata/faults", Options{})
	out, err := call(t, m, "/faults/echo", `{"id":7,"work":3}`, time.Second)
	if err != nil || !strings.HasPrefix(string(out), `{"id":7,`) {
		t.Fatalf("echo = %s, %v", out, err)
	}
	_, err = call(t, m, "/faults/lookup", `{"compound":"DOX","protein":"Q99999"}`, time.Second)
	var ge *abi.Error
	if !errors.As(err, &ge) || ge.Kind != abi.KindNotFound || ge.Field != "protein" {
		t.Fatalf("lookup error = %v, want not_found on protein", err)
	}
}

// Each limit: the failing call is classified, its instance discarded, and the
// next call on the same module answers.
func TestLimitsDiscardInstanceAndModuleStaysHealthy(t *testing.T) {
	m := load(t, "../testdata/faults", Options{})
	cases := []struct {
		path, input string
		want        FailureKind
	}{
		{"/faults/loop", `{}`, FailTimeout},
		{"/faults/membomb", `{}`, FailOutOfMemory},
		{"/faults/panic", `{}`, FailCrash},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			before := m.Stats().Discarded
			start := time.Now()
			_, err := call(t, m, c.path, c.input, 300*time.Millisecond)
			if got := failureKind(err); got != c.want {
				t.Fatalf("error = %v (kind %q), want kind %q", err, got, c.want)
			}
			if c.want == FailTimeout && time.Since(start) > 5*time.Second {
				t.Fatalf("timeout took %v", time.Since(start))
			}
			if m.Stats().Discarded != before+1 {
				t.Fatalf("discarded = %d, want %d", m.Stats().Discarded, before+1)
			}
			if out, err := call(t, m, "/faults/echo", `{"id":1}`, time.Second); err != nil {
				t.Fatalf("call after %s failed: %s, %v", c.path, out, err)
			}
		})
	}
}

func TestPanicDetailIsCaptured(t *testing.T) {
	m := load(t, "../testdata/faults", Options{})
	_, err := call(t, m, "/faults/panic", `{}`, time.Second)
	var f *Failure
	if !errors.As(err, &f) || !strings.Contains(f.Detail, "boom: the model crashed on purpose") {
		t.Fatalf("failure = %#v, want the panic message in Detail", err)
	}
}

func TestOutputCap(t *testing.T) {
	m := load(t, "../testdata/faults", Options{MaxOutputBytes: 64 << 10})
	if _, err := call(t, m, "/faults/huge", `{"kib":32}`, time.Second); err != nil {
		t.Fatalf("32 KiB output under a 64 KiB cap: %v", err)
	}
	_, err := call(t, m, "/faults/huge", `{"kib":200}`, time.Second)
	if failureKind(err) != FailOutputTooLarge {
		t.Fatalf("200 KiB output under a 64 KiB cap: %v, want output_too_large", err)
	}
	if m.Stats().Discarded != 0 {
		t.Fatal("an oversized output must not discard a healthy instance")
	}
}

// Concurrent calls never share an instance (the guest detects re-entry), the
// pool grows to its size and not beyond, and each caller gets its own answer.
func TestConcurrentCallsUseDistinctInstances(t *testing.T) {
	m := load(t, "../testdata/faults", Options{})
	const callers = 16
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				id := i*100 + j
				out, err := call(t, m, "/faults/echo", fmt.Sprintf(`{"id":%d,"work":200000}`, id), 5*time.Second)
				if err != nil {
					errs <- err
					return
				}
				var got struct{ ID int }
				if json.Unmarshal(out, &got); got.ID != id {
					errs <- fmt.Errorf("caller %d got answer %s", id, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := m.Stats(); s.Instances > 4 || s.Discarded != 0 {
		t.Fatalf("stats = %+v, want at most 4 instances and none discarded", s)
	}
}

type recordHandler struct {
	mu    sync.Mutex
	lines []string
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.lines = append(h.lines, r.Message)
	h.mu.Unlock()
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

func TestGuestLogIsBounded(t *testing.T) {
	h := &recordHandler{}
	m := load(t, "../testdata/faults", Options{Logger: slog.New(h)})
	if _, err := call(t, m, "/faults/log", `{"lines":150}`, time.Second); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	guest := 0
	for _, l := range h.lines {
		if strings.Contains(l, "guest line") {
			guest++
		}
	}
	if guest != MaxLogLinesPerCall || !strings.Contains(strings.Join(h.lines, "\n"), "guest log lines dropped") {
		t.Fatalf("%d guest lines logged (want %d) and lines %q", guest, MaxLogLinesPerCall, h.lines[len(h.lines)-1])
	}
}

func TestRetireWaitsForCallsInFlight(t *testing.T) {
	m, err := Load(context.Background(), modtest.Wasm(t, "../testdata/faults"), Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		close(started)
		_, err := call(t, m, "/faults/echo", `{"id":1,"work":30000000}`, 10*time.Second)
		result <- err
	}()
	<-started
	// Wait until the call holds an instance.
	deadline := time.Now().Add(5 * time.Second)
	for m.Stats().Idle != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := m.Retire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatalf("call in flight during Retire: %v", err)
	}
	if _, err := call(t, m, "/faults/echo", `{"id":2}`, time.Second); !errors.Is(err, ErrRetired) {
		t.Fatalf("call after Retire = %v, want ErrRetired", err)
	}
}
