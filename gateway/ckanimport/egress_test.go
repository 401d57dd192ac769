package ckanimport

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"toxgate/internal/egress"
)

// fileSite is the in-memory CKAN of import_test.go that also serves file
// downloads and redirects, and takes resource_patch uploads.
type fileSite struct {
	*site
	mu        sync.Mutex
	files     map[string][]byte
	redirects map[string]string
	got       map[string]int // resource id -> bytes uploaded
}

func newFileSite() *fileSite {
	return &fileSite{site: newSite(), files: map[string][]byte{}, redirects: map[string]string{}, got: map[string]int{}}
}

func (f *fileSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	b, isFile := f.files[r.URL.Path]
	to := f.redirects[r.URL.Path]
	f.mu.Unlock()
	switch {
	case isFile:
		_, _ = w.Write(b)
	case to != "":
		http.Redirect(w, r, to, http.StatusFound)
	case strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/"):
		file, _, err := r.FormFile("upload")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		n, _ := io.Copy(io.Discard, file)
		f.mu.Lock()
		f.got[r.FormValue("id")] += int(n)
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "result": map[string]any{"id": r.FormValue("id")}})
	default:
		f.site.ServeHTTP(w, r)
	}
}

// The import fetches files from the source's own host, and from any other
// host only when the egress policy allows it: a file URL or a redirect to
// a server on this machine is refused without a request reaching it;
// allowed, it is copied, within the size limit.
func TestFilesOnlyFromAllowedHosts(t *testing.T) {
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		_, _ = io.WriteString(w, "a,b\n1,2\n")
	}))
	defer other.Close()
	src, dst := newFileSite(), newFileSite()
	ss, ds := httptest.NewServer(src), httptest.NewServer(dst)
	defer ss.Close()
	defer ds.Close()
	src.orgs["o1"] = map[string]any{"id": "o1", "name": "lab", "title": "Lab"}
	src.files["/files/own.csv"] = []byte("x,y\n3,4\n")
	src.files["/files/big.csv"] = []byte(strings.Repeat("z", 2000))
	src.redirects["/files/redir.csv"] = other.URL + "/f.csv"
	for _, d := range []struct{ id, url string }{
		{"own", ss.URL + "/files/own.csv"},
		{"other", other.URL + "/f.csv"},
		{"redir", ss.URL + "/files/redir.csv"},
		{"big", ss.URL + "/files/big.csv"},
	} {
		src.datasets["d-"+d.id] = map[string]any{"id": "d-" + d.id, "name": "d-" + d.id, "owner_org": "o1",
			"metadata_modified": "2026-01-01T00:00:00.000000",
			"resources":         []any{map[string]any{"id": "r-" + d.id, "name": d.id, "url": d.url, "url_type": "upload"}}}
	}
	run := func(p *egress.Policy, max int64) Stats {
		t.Helper()
		st, err := Run(t.Context(), Options{From: ss.URL, To: ds.URL, Token: "t", WithFiles: true, Egress: p, MaxFileBytes: max,
			StatePath: filepath.Join(t.TempDir(), "state.json")})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	failures := func(st Stats) string { return strings.Join(st.Failures, "\n") }

	st := run(nil, 1000)
	if st.Failed != 3 || dst.got["r-own"] != 8 {
		t.Fatalf("default policy: %+v, uploaded %v", st, dst.got)
	}
	if f := failures(st); strings.Count(f, "not in egress.allow") != 2 || !strings.Contains(f, "larger than 1000 bytes") {
		t.Errorf("failures: %s", f)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the server that is not allowed was reached %d times", n)
	}

	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	p, err := egress.New(egress.Options{Allow: []string{"127.0.0.1:" + port}, MaxRedirects: 2})
	if err != nil {
		t.Fatal(err)
	}
	st = run(p, 4000)
	if st.Failed != 0 || dst.got["r-other"] != 8 || dst.got["r-redir"] != 8 || dst.got["r-big"] != 2000 {
		t.Fatalf("allowed: %+v, uploaded %v", st, dst.got)
	}
	if n := otherHits.Load(); n != 2 {
		t.Errorf("the allowed server was reached %d times, want 2", n)
	}
}
