package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-plugin"
)

// panicky is a plugin whose action "boom" panics and whose other actions
// answer 200.
type panicky struct{}

func (panicky) Describe(context.Context) (*Manifest, error) {
	return &Manifest{Name: "panicky", Actions: []ActionSpec{{Name: "boom"}, {Name: "ok", GET: true}}}, nil
}

func (panicky) Call(_ context.Context, req *Request) (*Response, error) {
	if req.Action == "boom" {
		var m map[string]int
		m["x"]++ // a nil map write: a runtime panic, as a bug would raise
	}
	return &Response{Status: 200, ContentType: "application/json", Body: []byte(`{"success": true}`)}, nil
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A panic in one call, over either transport's real server, is answered
// with CKAN's 500 and logged with its stack; the next calls are served.
func TestCallPanicIsRecovered(t *testing.T) {
	ps := map[string]plugin.Plugin{PluginKey: &Plugin{Impl: panicky{}}}
	transports := map[string]func(t *testing.T) ActionPlugin{
		TransportNetRPC: func(t *testing.T) ActionPlugin {
			client, _ := plugin.TestPluginRPCConn(t, ps, nil)
			t.Cleanup(func() { _ = client.Close() })
			raw, err := client.Dispense(PluginKey)
			if err != nil {
				t.Fatal(err)
			}
			return raw.(ActionPlugin)
		},
		TransportGRPC: func(t *testing.T) ActionPlugin {
			client, server := plugin.TestPluginGRPCConn(t, false, ps)
			t.Cleanup(func() { _ = client.Close(); server.Stop() })
			raw, err := client.Dispense(PluginKey)
			if err != nil {
				t.Fatal(err)
			}
			return raw.(ActionPlugin)
		},
	}
	for name, connect := range transports {
		t.Run(name, func(t *testing.T) {
			logs := &syncBuffer{}
			defer func(old *slog.Logger) { slog.SetDefault(old) }(slog.Default())
			slog.SetDefault(slog.New(slog.NewJSONHandler(logs, nil)))
			rpc := connect(t)
			ctx := context.Background()
			resp, err := rpc.Call(ctx, &Request{Action: "boom", Method: "POST", SiteURL: "http://site.test"})
			if err != nil {
				t.Fatalf("call that panicked: error %v, want a 500 reply", err)
			}
			var body struct {
				Success bool
				Help    string
				Error   map[string]string
			}
			if err := json.Unmarshal(resp.Body, &body); err != nil {
				t.Fatalf("body %q: %v", resp.Body, err)
			}
			if resp.Status != 500 || resp.ErrorType != "Internal Server Error" || body.Success ||
				body.Error["__type"] != "Internal Server Error" || body.Error["message"] != "Internal Server Error" ||
				!strings.HasPrefix(body.Help, "http://site.test/api/3/action/help_show?name=boom") {
				t.Fatalf("reply %d %q %s", resp.Status, resp.ErrorType, resp.Body)
			}
			log := logs.String()
			if !strings.Contains(log, `"msg":"plugin call panicked"`) || !strings.Contains(log, `"action":"boom"`) ||
				!strings.Contains(log, "assignment to entry in nil map") || !strings.Contains(log, "contract.panicky.Call") {
				t.Fatalf("log lacks the panic, the action or the stack: %s", log)
			}
			for range 3 {
				resp, err := rpc.Call(ctx, &Request{Action: "ok", Method: "GET"})
				if err != nil || resp.Status != 200 {
					t.Fatalf("call after the panic: %v %+v", err, resp)
				}
			}
		})
	}
}
