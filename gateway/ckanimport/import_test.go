package ckanimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// site is a minimal CKAN action API over in-memory records, enough to
// exercise the import's paging against a CKAN whose datasets share one
// metadata_modified (a bulk load does that) and whose groups exist, which
// the toxgate gateways of the integration test cannot produce.
// TestCatalogImport in gateway/server runs the import against real gateways.
type site struct {
	mu       sync.Mutex
	datasets map[string]map[string]any
	orgs     map[string]map[string]any
	groups   map[string]map[string]any
	creates  map[string]int // package_create calls per id
	updates  int
}

func newSite() *site {
	return &site{datasets: map[string]map[string]any{}, orgs: map[string]map[string]any{},
		groups: map[string]map[string]any{}, creates: map[string]int{}}
}

var rangeFQ = regexp.MustCompile(`metadata_modified:\[(\S+) TO \*\]`)

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	action := strings.TrimPrefix(r.URL.Path, "/api/3/action/")
	var args map[string]any
	_ = json.NewDecoder(r.Body).Decode(&args)
	s.mu.Lock()
	defer s.mu.Unlock()
	reply := func(status int, res any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != 200 {
			json.NewEncoder(w).Encode(map[string]any{"success": false, "error": map[string]any{"__type": "Not Found Error", "message": fmt.Sprint(res)}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"success": true, "result": res})
	}
	id, _ := args["id"].(string)
	table := func(kind string) map[string]map[string]any {
		if kind == "group" {
			return s.groups
		}
		return s.orgs
	}
	switch action {
	case "organization_list", "group_list":
		var names []string
		for _, o := range table(strings.TrimSuffix(action, "_list")) {
			names = append(names, o["name"].(string))
		}
		sort.Strings(names)
		off := int(args["offset"].(float64))
		reply(200, names[min(off, len(names)):])
	case "organization_show", "group_show":
		for _, o := range table(strings.TrimSuffix(action, "_show")) {
			if o["id"] == id || o["name"] == id {
				reply(200, o)
				return
			}
		}
		reply(404, "Not found")
	case "organization_create", "group_create", "organization_patch", "group_patch":
		args["state"] = "active"
		table(strings.Split(action, "_")[0])[id] = args
		reply(200, args)
	case "package_show":
		if d := s.datasets[id]; d != nil {
			reply(200, d)
			return
		}
		reply(404, "Not found")
	case "package_create", "package_update":
		if action == "package_create" {
			s.creates[id]++
			if s.datasets[id] != nil {
				reply(409, "Dataset id already exists")
				return
			}
		} else {
			s.updates++
		}
		args["metadata_modified"] = "2026-11-25T10:00:00.000000"
		s.datasets[id] = args
		reply(200, args)
	case "package_search":
		lo := ""
		if m := rangeFQ.FindStringSubmatch(fmt.Sprint(args["fq"])); m != nil {
			lo = strings.TrimSuffix(m[1], "Z")
		}
		var hits []map[string]any
		for _, d := range s.datasets {
			if d["metadata_modified"].(string) >= lo[:min(len(lo), 26)] {
				hits = append(hits, d)
			}
		}
		sort.Slice(hits, func(i, j int) bool {
			a, b := hits[i]["metadata_modified"].(string), hits[j]["metadata_modified"].(string)
			return a < b || a == b && hits[i]["id"].(string) < hits[j]["id"].(string)
		})
		start, rows := int(args["start"].(float64)), int(args["rows"].(float64))
		page := hits[min(start, len(hits)):min(start+rows, len(hits))]
		reply(200, map[string]any{"count": len(hits), "results": page})
	default:
		w.WriteHeader(400)
		w.Write([]byte(`"Bad request - Action name not known: ` + action + `"`))
	}
}

type stopAfter struct {
	n      int
	cancel context.CancelFunc
}

func (s *stopAfter) Total(int) {}
func (s *stopAfter) Dataset(string, Outcome) {
	if s.n--; s.n == 0 {
		s.cancel()
	}
}

// TestTiesAcrossPagesAndGroups copies 230 datasets modified at the same
// instant, 50 a page, interrupted in the middle of the ties and resumed:
// every dataset is created once and only once, groups come along.
func TestTiesAcrossPagesAndGroups(t *testing.T) {
	src, dst := newSite(), newSite()
	src.orgs["o1"] = map[string]any{"id": "o1", "name": "lab", "title": "Lab"}
	src.groups["g1"] = map[string]any{"id": "g1", "name": "liver", "title": "Liver"}
	for i := range 230 {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		src.datasets[id] = map[string]any{"id": id, "name": fmt.Sprintf("d%d", i), "owner_org": "o1",
			"metadata_modified": "2026-01-01T00:00:00.000000", "groups": []any{map[string]any{"name": "liver"}}}
	}
	ss, ds := httptest.NewServer(src), httptest.NewServer(dst)
	defer ss.Close()
	defer ds.Close()
	state := filepath.Join(t.TempDir(), "state.json")
	o := Options{From: ss.URL, To: ds.URL, Token: "t", StatePath: state, PageSize: 50}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Progress = &stopAfter{n: 75, cancel: cancel}
	st, err := Run(ctx, o)
	if !errors.Is(err, context.Canceled) || st.Created != 75 || st.Groups != 1 || st.Organizations != 1 {
		t.Fatalf("interrupted: %v %+v", err, st)
	}
	o.Progress = nil
	st, err = Run(context.Background(), o)
	if err != nil || st.Created != 155 || st.Updated != 0 || st.Failed != 0 || !st.Resumed {
		t.Fatalf("resumed: %v %+v", err, st)
	}
	if len(dst.datasets) != 230 {
		t.Fatalf("%d datasets at the target", len(dst.datasets))
	}
	for id, n := range dst.creates {
		if n != 1 {
			t.Fatalf("%s created %d times", id, n)
		}
	}
	for _, d := range dst.datasets {
		if g := d["groups"].([]any); len(g) != 1 || g[0].(map[string]any)["name"] != "liver" {
			t.Fatalf("groups of %v", d)
		}
	}
	// Nothing changed: nothing to do, and the group is left alone.
	st, err = Run(context.Background(), o)
	if err != nil || st.Created+st.Updated+st.Failed+st.Groups+st.Organizations != 0 {
		t.Fatalf("third run: %v %+v", err, st)
	}
}
