package datastore_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// loadError is the public error text of a finished load.
func loadError(t *testing.T, st map[string]any) string {
	t.Helper()
	info, _ := st["task_info"].(map[string]any)
	e, _ := info["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

// hitsOf counts the requests the file server saw for paths.
func (f *files) hitsOf(paths ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range paths {
		n += f.hits[p]
	}
	return n
}

// Without an allow-list the loader reaches nothing on this machine: a
// resource linking a loopback server is not loaded, in any spelling of
// the address, and an open port and a closed one end in the same generic
// error, so loads cannot scan ports. The cause is in the server's log.
func TestLoaderRefusesInternalAddresses(t *testing.T) {
	f := newFiles(t)
	s := newSite(t, nil)
	f.put("/x.csv", []byte("a,b\n1,2\n"))
	_, port, _ := net.SplitHostPort(f.srv.Listener.Addr().String())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	urls := map[string]string{
		"direct":      f.srv.URL + "/x.csv",
		"closed-port": "http://" + closed + "/x.csv",
		"localhost":   "http://localhost:" + port + "/x.csv",
		"ipv6":        "http://[::1]:" + port + "/x.csv",
		"mapped":      "http://[::ffff:127.0.0.1]:" + port + "/x.csv",
		"unspecified": "http://0.0.0.0:" + port + "/x.csv",
		"metadata":    "http://169.254.169.254/latest/meta-data/x.csv",
	}
	ids := map[string]string{}
	for name, u := range urls {
		ids[name] = s.dataset("ssrf-"+name, false, map[string]any{"url": u, "format": "CSV"})
	}
	var infos []string
	for name, id := range ids {
		st := s.waitLoad(id, time.Minute)
		if st["status"] != "error" || loadError(t, st) != "the address is not allowed" {
			t.Errorf("%s: %v", name, st)
		}
		for _, leak := range []string{"refused", "timeout", "connect", "dial", "127.0.0.1", "loopback"} {
			if strings.Contains(strings.ToLower(jsonText(st["task_info"])), leak) {
				t.Errorf("%s: xloader_status tells %q: %s", name, leak, jsonText(st["task_info"]))
			}
		}
		s.fail("", "datastore_search", map[string]any{"resource_id": id}, 404, "Not Found Error")
		if show := s.ok("", "resource_show", map[string]any{"id": id}); show["datastore_active"] != false {
			t.Errorf("%s: datastore_active %v", name, show["datastore_active"])
		}
		if name == "direct" || name == "closed-port" {
			info := st["task_info"].(map[string]any)
			infos = append(infos, jsonText(map[string]any{"status": st["status"], "error": info["error"], "rows": info["rows_loaded"]}))
		}
	}
	if len(infos) == 2 && infos[0] != infos[1] {
		t.Errorf("an open and a closed port differ: %s / %s", infos[0], infos[1])
	}
	if n := f.hitsOf("/x.csv"); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	if !strings.Contains(s.g.Logs(), "loopback address not in egress.allow") {
		t.Errorf("the server log does not tell the cause")
	}
	// a scheme other than http(s), submitted by hand
	fid := s.dataset("ssrf-file", false, map[string]any{"url": "file:///etc/passwd", "format": "CSV"})
	s.ok(s.tok["eddie"], "xloader_submit", map[string]any{"resource_id": fid})
	if st := s.waitLoad(fid, time.Minute); st["status"] != "error" || loadError(t, st) != "only http and https URLs can be fetched" {
		t.Errorf("file URL: %v", st)
	}
}

// With the file server allowed, a redirect from it to a server that is
// not allowed (by address or by a name resolving to loopback) is refused;
// a source that stops sending is cut off after egress.idle_timeout.
func TestLoaderRedirectsAndIdleTimeout(t *testing.T) {
	outer, inner := newFiles(t), newFiles(t)
	s := newSite(t, outer.allow([]string{"TOXGATE_EGRESS_IDLE_TIMEOUT=1s"}))
	_, innerPort, _ := net.SplitHostPort(inner.srv.Listener.Addr().String())
	inner.put("/x.csv", []byte("a,b\n1,2\n"))
	outer.mu.Lock()
	outer.redirect["/to-inner.csv"] = inner.srv.URL + "/x.csv"
	outer.redirect["/to-localhost.csv"] = "http://localhost:" + innerPort + "/x.csv"
	outer.redirect["/to-self.csv"] = "/ok.csv"
	outer.hold["/stall.csv"] = make(chan struct{})
	outer.mu.Unlock()
	outer.put("/ok.csv", []byte("a,b\n1,2\n3,4\n"))
	var stall strings.Builder
	stall.WriteString("k,v\n")
	for i := 0; i < 2000; i++ {
		stall.WriteString("1,x\n")
	}
	outer.put("/stall.csv", []byte(stall.String()))

	okID := s.dataset("allowed", false, map[string]any{"url": outer.srv.URL + "/to-self.csv", "format": "CSV"})
	if st := s.waitLoad(okID, time.Minute); st["status"] != "complete" {
		t.Fatalf("allowed server, redirect to itself: %v", st)
	}
	for _, p := range []string{"/to-inner.csv", "/to-localhost.csv"} {
		id := s.dataset("redirect"+strings.NewReplacer("/", "-", ".csv", "").Replace(p), false, map[string]any{"url": outer.srv.URL + p, "format": "CSV"})
		if st := s.waitLoad(id, time.Minute); st["status"] != "error" || loadError(t, st) != "the address is not allowed" {
			t.Errorf("redirect %s: %v", p, st)
		}
	}
	if n := inner.hitsOf("/x.csv"); n != 0 {
		t.Errorf("a redirect reached the server that is not allowed %d times", n)
	}
	missing := s.dataset("missing", false, map[string]any{"url": outer.srv.URL + "/none.csv", "format": "CSV"})
	if st := s.waitLoad(missing, time.Minute); loadError(t, st) != "the URL could not be fetched: the server answered HTTP 404" {
		t.Errorf("missing file: %v", st)
	}
	sid := s.dataset("stalled", false, map[string]any{"url": outer.srv.URL + "/stall.csv", "format": "CSV"})
	st := s.waitLoad(sid, time.Minute)
	if st["status"] != "error" || loadError(t, st) != "the URL could not be fetched" {
		t.Errorf("stalled source: %v", st)
	}
	if !strings.Contains(s.g.Logs(), "no data for 1s") {
		t.Errorf("the server log does not tell the idle timeout")
	}
}

// One user's slow sources do not hold up another user's load: with two
// workers and one load per user at a time, an upload of the sysadmin is
// loaded while the editor's first link still trickles and the editor's
// other loads wait; past the editor's queue cap a load is refused (429 on
// xloader_submit, a clear error on the resource), and a sysadmin is not
// held to that cap.
func TestLoaderTakesTurns(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		f := newFiles(t)
		s := newSite(t, f.allow(append(env, "TOXGATE_DATASTORE_LOAD_WORKERS=2", "TOXGATE_DATASTORE_LOAD_WORKERS_PER_USER=1",
			"TOXGATE_DATASTORE_LOAD_QUEUE_PER_USER=2", "TOXGATE_EGRESS_IDLE_TIMEOUT=10m")))
		ed := s.tok["eddie"]
		var slow strings.Builder
		slow.WriteString("k,v\n")
		for i := 0; i < 5000; i++ {
			slow.WriteString("1,slow\n")
		}
		paths := []string{"/slow1.csv", "/slow2.csv", "/slow3.csv"}
		f.mu.Lock()
		for _, p := range paths {
			f.hold[p] = make(chan struct{})
		}
		f.mu.Unlock()
		var ids []string
		for i, p := range paths {
			ids = append(ids, s.dataset("slow"+string(rune('1'+i)), false, map[string]any{"url": f.put(p, []byte(slow.String())), "format": "CSV"}))
			if i == 0 {
				select {
				case <-f.began:
				case <-time.After(time.Minute):
					t.Fatal("the first slow load never started")
				}
			}
		}
		status := func(id string) map[string]any {
			return s.ok(ed, "xloader_status", map[string]any{"resource_id": id})
		}
		// the editor's queue is full: two loads wait
		over := s.dataset("over", false, map[string]any{"url": f.put("/over.csv", []byte("a\n1\n")), "format": "CSV"})
		if st := status(over); st["status"] != "error" || !strings.Contains(loadError(t, st), "datastore.load_queue_per_user") {
			t.Errorf("a load past the queue cap: %v", st)
		}
		if e := s.fail(ed, "xloader_submit", map[string]any{"resource_id": over}, http.StatusTooManyRequests, "Validation Error"); !strings.Contains(e["message"].(string), "at most 2") {
			t.Errorf("429 message: %v", e)
		}

		// a sysadmin is not held to the cap (an import, a script of the site's own)
		s.ok(s.admin, "xloader_submit", map[string]any{"resource_id": over})

		// the sysadmin's upload is loaded meanwhile
		s.ok(s.admin, "package_create", map[string]any{"name": "admin-upload", "owner_org": "lab"})
		up := s.upload(s.admin, "resource_create", map[string]string{"package_id": "admin-upload", "name": "t"}, "t.csv", []byte("compound,n\naspirin,1\n"))
		if st := s.waitLoad(up["id"].(string), 2*time.Minute); st["status"] != "complete" {
			t.Fatalf("the other user's upload: %v", st)
		}
		if r := s.search("", map[string]any{"resource_id": up["id"], "fields": "compound,n"}); jsonText(r["records"]) != `[{"compound":"aspirin","n":1}]` {
			t.Errorf("uploaded table: %s", jsonText(r["records"]))
		}
		// ...while the editor's first load still runs and the others wait
		first := -1
		for i, p := range paths {
			if f.hitsOf(p) == 1 {
				first = i
			}
		}
		if n := f.hitsOf(paths...); n != 1 || first < 0 {
			t.Fatalf("the slow server saw %d requests, want 1 (one load per user at a time)", n)
		}
		for i, id := range ids {
			want := "pending"
			if i == first {
				want = "running"
			}
			if st := status(id); st["status"] != want {
				t.Errorf("slow load %d: %v, want %s", i+1, st["status"], want)
			}
		}
		if st := s.waitLoad(over, time.Minute); st["status"] != "complete" {
			t.Errorf("the sysadmin's resubmitted load: %v", st)
		}
		// released, the editor's loads finish one after the other
		f.mu.Lock()
		for _, p := range paths {
			close(f.hold[p])
			delete(f.hold, p)
		}
		f.mu.Unlock()
		for i, id := range ids {
			if st := s.waitLoad(id, 2*time.Minute); st["status"] != "complete" {
				t.Errorf("slow load %d after release: %v", i+1, st)
			}
		}
	})
}
