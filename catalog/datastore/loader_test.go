package datastore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"toxgate/gateway/harness"
)

// files serves CSV fixtures on loopback for the loader to fetch.
type files struct {
	mu       sync.Mutex
	body     map[string][]byte
	hits     map[string]int
	hold     map[string]chan struct{} // first request of a path stops midway until closed, then sends the rest
	redirect map[string]string        // path to the URL it redirects to
	began    chan string
	srv      *httptest.Server
}

func newFiles(t *testing.T) *files { return newFilesTB(t) }

func newFilesTB(t testing.TB) *files {
	f := &files{body: map[string][]byte{}, hits: map[string]int{}, hold: map[string]chan struct{}{}, redirect: map[string]string{}, began: make(chan string, 8)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		b, ok := f.body[r.URL.Path]
		f.hits[r.URL.Path]++
		first := f.hits[r.URL.Path] == 1
		hold := f.hold[r.URL.Path]
		to := f.redirect[r.URL.Path]
		f.mu.Unlock()
		if to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		if hold != nil && first {
			_, _ = w.Write(b[:len(b)/2])
			w.(http.Flusher).Flush()
			f.began <- r.URL.Path
			select {
			case <-hold:
				_, _ = w.Write(b[len(b)/2:])
			case <-r.Context().Done():
			}
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(func() {
		f.mu.Lock()
		for _, c := range f.hold {
			select {
			case <-c:
			default:
				close(c)
			}
		}
		f.mu.Unlock()
		f.srv.Close()
	})
	return f
}

// allow is env plus the egress allow-list entry of the file server: its
// loopback address and port, which the loader refuses otherwise.
func (f *files) allow(env []string) []string {
	return append(append([]string(nil), env...), "TOXGATE_EGRESS_ALLOW="+f.srv.Listener.Addr().String())
}

func (f *files) put(path string, b []byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.body[path] = b
	return f.srv.URL + path
}

// The loader guesses types from a messy CSV, detects encoding and
// delimiter, reports its state, reloads a replaced file, and leaves a
// clear error (and no table) for a file it cannot parse.
func TestLoaderFromLinks(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		f := newFiles(t)
		s := newSite(t, f.allow(env))
		ed := s.tok["eddie"]
		messy := "\xEF\xBB\xBFname,\"dose, mg\",value,mixed,when,empty\r\n" +
			"\"Aspirin, buffered\",100,1.5,10,2024-01-02,\r\n" +
			"\"He said \"\"hi\"\"\",200,2,20,2024-01-03T04:05:06,\r\n" +
			"Caffeine,,3.25,n/a,2024-01-04,\r\n" +
			"\r\n" +
			"Théophylline,400,-0.5,40,2024-01-05,\r\n"
		rid := s.dataset("messy", false, map[string]any{"url": f.put("/messy.csv", []byte(messy)), "format": "CSV", "name": "messy"})
		st := s.waitLoad(rid, time.Minute)
		if st["status"] != "complete" {
			t.Fatalf("load: %v", st)
		}
		r := s.search("", map[string]any{"resource_id": rid, "sort": "_id"})
		types := map[string]string{}
		for _, fd := range r["fields"].([]any) {
			m := fd.(map[string]any)
			types[m["id"].(string)] = m["type"].(string)
		}
		if fmt.Sprint(types) != "map[_id:int dose, mg:int empty:text mixed:text name:text value:numeric when:timestamp]" {
			t.Errorf("guessed types: %v", types)
		}
		want := []string{
			`{"_id":1,"dose, mg":100,"empty":"","mixed":"10","name":"Aspirin, buffered","value":1.5,"when":"2024-01-02T00:00:00"}`,
			`{"_id":2,"dose, mg":200,"empty":"","mixed":"20","name":"He said \"hi\"","value":2,"when":"2024-01-03T04:05:06"}`,
			`{"_id":3,"dose, mg":null,"empty":"","mixed":"n/a","name":"Caffeine","value":3.25,"when":"2024-01-04T00:00:00"}`,
			`{"_id":4,"dose, mg":400,"empty":"","mixed":"40","name":"Théophylline","value":-0.5,"when":"2024-01-05T00:00:00"}`,
		}
		got := records(r)
		if len(got) != len(want) {
			t.Fatalf("rows: %d, want %d: %v", len(got), len(want), got)
		}
		for i := range want {
			if g := jsonText(got[i]); g != want[i] {
				t.Errorf("row %d:\n got %s\nwant %s", i+1, g, want[i])
			}
		}
		if show := s.ok("", "resource_show", map[string]any{"id": rid}); show["datastore_active"] != true {
			t.Errorf("datastore_active after a load: %v", show["datastore_active"])
		}
		if info := st["task_info"].(map[string]any); info["rows_loaded"].(float64) != 4 || len(info["logs"].([]any)) < 2 {
			t.Errorf("status task_info: %v", info)
		}

		// Windows-1252 and tabs (format TSV)
		latin := []byte("name\tn\nCaf\xe9\t1\nNa\xefve\t2\n")
		tid := s.dataset("latin", false, map[string]any{"url": f.put("/latin.txt", latin), "format": "TSV"})
		if st := s.waitLoad(tid, time.Minute); st["status"] != "complete" {
			t.Fatalf("TSV load: %v", st)
		}
		if r := s.search("", map[string]any{"resource_id": tid, "fields": "name,n", "sort": "n"}); jsonText(r["records"]) != `[{"n":1,"name":"Café"},{"n":2,"name":"Naïve"}]` {
			t.Errorf("windows-1252 TSV: %s", jsonText(r["records"]))
		}
		// semicolons, detected
		sid := s.dataset("semi", false, map[string]any{"url": f.put("/semi.csv", []byte("a;b\n1;x\n2;y\n"))})
		if st := s.waitLoad(sid, time.Minute); st["status"] != "complete" {
			t.Fatalf("semicolon load: %v", st)
		}
		if r := s.search("", map[string]any{"resource_id": sid, "fields": "a,b"}); jsonText(r["records"]) != `[{"a":1,"b":"x"},{"a":2,"b":"y"}]` {
			t.Errorf("semicolon CSV: %s", jsonText(r["records"]))
		}

		// a gzip-compressed CSV with no format: the name tells, the bytes
		// are read through gzip
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write([]byte("compound,ic50\naspirin,1.5\ncaffeine,40\n"))
		_ = zw.Close()
		gid := s.dataset("gzipped", false, map[string]any{"url": f.put("/chem.csv.gz", gz.Bytes())})
		if st := s.waitLoad(gid, time.Minute); st["status"] != "complete" {
			t.Fatalf(".csv.gz load: %v", st)
		}
		if r := s.search("", map[string]any{"resource_id": gid, "fields": "compound,ic50", "sort": "_id"}); jsonText(r["records"]) != `[{"compound":"aspirin","ic50":1.5},{"compound":"caffeine","ic50":40}]` {
			t.Errorf(".csv.gz table: %s", jsonText(r["records"]))
		}

		// an XLSX workbook: the first sheet, numbers stay numbers
		wb := excelize.NewFile()
		for i, row := range [][]any{{"compound", "ic50", "n", "note"}, {"aspirin", 1.25, 3, "ok"}, {"caffeine", 40, 12, "high, check"}} {
			if err := wb.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i+1), &row); err != nil {
				t.Fatal(err)
			}
		}
		xb, err := wb.WriteToBuffer()
		if err != nil {
			t.Fatal(err)
		}
		xid := s.dataset("workbook", false, map[string]any{"url": f.put("/book.xlsx", xb.Bytes()), "format": "XLSX"})
		if st := s.waitLoad(xid, time.Minute); st["status"] != "complete" {
			t.Fatalf("XLSX load: %v", st)
		}
		if r := s.search("", map[string]any{"resource_id": xid, "fields": "compound,ic50,n,note", "sort": "_id"}); jsonText(r["records"]) != `[{"compound":"aspirin","ic50":1.25,"n":3,"note":"ok"},{"compound":"caffeine","ic50":40,"n":12,"note":"high, check"}]` {
			t.Errorf("XLSX table: %s", jsonText(r["records"]))
		}

		// a replaced file reloads the table
		s.ok(ed, "resource_patch", map[string]any{"id": rid, "url": f.put("/messy2.csv", []byte("name,value\nx,1\ny,2\nz,3\n"))})
		deadline := time.Now().Add(time.Minute)
		for {
			st := s.waitLoad(rid, time.Minute)
			r := s.search("", map[string]any{"resource_id": rid, "limit": 0})
			if st["status"] == "complete" && r["total"].(float64) == 3 {
				if len(r["fields"].([]any)) != 3 {
					t.Errorf("reloaded fields: %v", r["fields"])
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not reloaded: %v %v", st, r["total"])
			}
			time.Sleep(100 * time.Millisecond)
		}

		// files that cannot be loaded: a clear error and no table
		for name, body := range map[string]string{"/ragged.csv": "a,b\n1,2\n3,4,5\n", "/empty.csv": ""} {
			bid := s.dataset("bad"+strings.Trim(name, "/.csv"), false, map[string]any{"url": f.put(name, []byte(body)), "format": "CSV"})
			st := s.waitLoad(bid, time.Minute)
			info := st["task_info"].(map[string]any)
			if st["status"] != "error" || info["error"] == nil {
				t.Errorf("%s: status %v", name, st)
			}
			s.fail("", "datastore_search", map[string]any{"resource_id": bid}, 404, "Not Found Error")
			if show := s.ok("", "resource_show", map[string]any{"id": bid}); show["datastore_active"] != false {
				t.Errorf("%s: datastore_active %v", name, show["datastore_active"])
			}
		}
		mid := s.dataset("missing", false, map[string]any{"url": f.srv.URL + "/missing.csv"})
		if st := s.waitLoad(mid, time.Minute); st["status"] != "error" || !strings.Contains(jsonText(st), "404") {
			t.Errorf("missing file: %v", st)
		}
		// xloader_submit reloads on demand
		s.ok(ed, "xloader_submit", map[string]any{"resource_id": sid})
		if st := s.waitLoad(sid, time.Minute); st["status"] != "complete" {
			t.Errorf("resubmitted load: %v", st)
		}
	})
}

// A 200,000-row CSV loads and is searchable.
func TestLoaderLargeFile(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		f := newFiles(t)
		s := newSite(t, f.allow(env))
		var b strings.Builder
		b.WriteString("id,smiles,conc,viability\n")
		const n = 200000
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%d,C%dO,%g,%d.5\n", i, i%97, float64(i%1000)/10, i%100)
		}
		rid := s.dataset("big", false, map[string]any{"url": f.put("/big.csv", []byte(b.String())), "format": "CSV"})
		if st := s.waitLoad(rid, 5*time.Minute); st["status"] != "complete" {
			t.Fatalf("load: %v", st)
		}
		r := s.search("", map[string]any{"resource_id": rid, "filters": map[string]any{"id": 123456}, "fields": "id,smiles,conc,viability"})
		if r["total"].(float64) != 1 || jsonText(r["records"]) != `[{"conc":45.6,"id":123456,"smiles":"C72O","viability":56.5}]` {
			t.Errorf("filtered search: %v %s", r["total"], jsonText(r["records"]))
		}
		if r := s.search("", map[string]any{"resource_id": rid, "limit": 2, "offset": 150000, "sort": "id desc", "fields": "id"}); r["total"].(float64) != n || jsonText(r["records"]) != `[{"id":49999},{"id":49998}]` {
			t.Errorf("sorted page: %v %s", r["total"], jsonText(r["records"]))
		}
	})
}

// kill -9 of the gateway and its plugin in the middle of a reload: after
// a restart the old table is still whole, the load is redone, and the
// staging table is never a DataStore table.
func TestLoaderSurvivesKill(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		f := newFiles(t)
		env = f.allow(env)
		s := newSite(t, env)
		ed := s.tok["eddie"]
		var v1, v2 strings.Builder
		v1.WriteString("k,v\n")
		v2.WriteString("k,v\n")
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(&v1, "%d,one\n", i)
		}
		for i := 0; i < 60000; i++ {
			fmt.Fprintf(&v2, "%d,two\n", i)
		}
		rid := s.dataset("killed", false, map[string]any{"url": f.put("/v1.csv", []byte(v1.String())), "format": "CSV"})
		if st := s.waitLoad(rid, time.Minute); st["status"] != "complete" {
			t.Fatalf("first load: %v", st)
		}
		f.mu.Lock()
		f.hold["/v2.csv"] = make(chan struct{})
		f.mu.Unlock()
		s.ok(ed, "resource_patch", map[string]any{"id": rid, "url": f.put("/v2.csv", []byte(v2.String()))})
		select {
		case <-f.began:
		case <-time.After(time.Minute):
			t.Fatal("the reload never started")
		}
		// kill -9 the plugin and the gateway while the load runs
		pid := pluginPID(t, s)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill plugin %d: %v", pid, err)
		}
		s.g.Signal(syscall.SIGKILL)
		s.g.Wait(30 * time.Second)

		g2 := harness.Start(t, harness.WithDataDir(s.g.DataDir), harness.WithEnv(env...))
		s2 := &site{t: t, g: g2, admin: s.admin, tok: s.tok}
		// before the redo completes, the table is the old one, whole
		r := s2.search("", map[string]any{"resource_id": rid, "limit": 1})
		if total := r["total"].(float64); total != 1000 && total != 60000 {
			t.Fatalf("a half table is visible: total %v", total)
		}
		if code, out := s2.call("", "datastore_search_sql", map[string]any{"sql": `SELECT count(*) FROM "` + rid + `__load"`}); code != 403 && code != 409 {
			t.Fatalf("the staging table is readable: %d %v", code, out)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			st := s2.waitLoad(rid, 2*time.Minute)
			r := s2.search("", map[string]any{"resource_id": rid, "limit": 1, "fields": "v"})
			if st["status"] == "complete" && r["total"].(float64) == 60000 && jsonText(r["records"]) == `[{"v":"two"}]` {
				logs := jsonText(st["task_info"])
				if !strings.Contains(logs, "interruption") {
					t.Errorf("the status does not tell the load was redone: %s", logs)
				}
				break
			}
			if st["status"] == "error" {
				t.Fatalf("the load failed after the restart: %v", st)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the load was not redone: %v %v", st, r["total"])
			}
			time.Sleep(200 * time.Millisecond)
		}

		// again, killed while rows go into the staging table
		var v3 strings.Builder
		v3.WriteString("k,v\n")
		for i := 0; i < 400000; i++ {
			fmt.Fprintf(&v3, "%d,three\n", i)
		}
		s2.ok(ed, "resource_patch", map[string]any{"id": rid, "url": f.put("/v3.csv", []byte(v3.String()))})
		deadline = time.Now().Add(2 * time.Minute)
		for {
			_, out := s2.call(ed, "xloader_status", map[string]any{"resource_id": rid})
			r, _ := out["result"].(map[string]any)
			info, _ := r["task_info"].(map[string]any)
			if r["status"] == "running" && info["rows_loaded"].(float64) > 0 {
				break
			}
			if r["status"] == "complete" {
				t.Fatalf("the load finished before it could be killed: %v", r)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the load never reported progress: %v", out)
			}
			time.Sleep(20 * time.Millisecond)
		}
		pid = pluginPID(t, s2)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill plugin %d: %v", pid, err)
		}
		g2.Signal(syscall.SIGKILL)
		g2.Wait(30 * time.Second)
		g3 := harness.Start(t, harness.WithDataDir(s.g.DataDir), harness.WithEnv(env...))
		s3 := &site{t: t, g: g3, admin: s.admin, tok: s.tok}
		if r := s3.search("", map[string]any{"resource_id": rid, "limit": 1}); r["total"].(float64) != 60000 && r["total"].(float64) != 400000 {
			t.Fatalf("a half table is visible after a kill during the insert: total %v", r["total"])
		}
		deadline = time.Now().Add(3 * time.Minute)
		for {
			st := s3.waitLoad(rid, 3*time.Minute)
			r := s3.search("", map[string]any{"resource_id": rid, "limit": 1, "fields": "v"})
			if st["status"] == "complete" && r["total"].(float64) == 400000 && jsonText(r["records"]) == `[{"v":"three"}]` {
				break
			}
			if st["status"] == "error" {
				t.Fatalf("the load failed after the second restart: %v", st)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the load was not redone after the second kill: %v %v", st, r["total"])
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// pluginPID reads the catalog plugin's process id from /admin/plugins.
func pluginPID(t *testing.T, s *site) int {
	t.Helper()
	resp, body, err := s.g.Do(context.Background(), http.MethodGet, "/admin/plugins", http.Header{"Authorization": {s.admin}}, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/admin/plugins: %v %s", err, body)
	}
	var out struct {
		Plugins []struct {
			Name string `json:"name"`
			PID  int    `json:"pid"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("/admin/plugins: %v %s", err, body)
	}
	for _, p := range out.Plugins {
		if p.Name == "catalog" && p.PID > 0 {
			return p.PID
		}
	}
	t.Fatalf("no catalog plugin pid in %s", body)
	return 0
}
