package datastore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"testing"
	"time"
)

// upload posts a multipart resource action with the file in "upload", as
// `ckanapi action resource_create upload@file.csv` does.
func (s *site) upload(token, action string, fields map[string]string, name string, data []byte) map[string]any {
	s.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("upload", name)
	_, _ = fw.Write(data)
	mw.Close()
	resp, body, err := s.g.Do(context.Background(), http.MethodPost, "/api/3/action/"+action,
		http.Header{"Content-Type": {mw.FormDataContentType()}, "Authorization": {token}}, buf.Bytes())
	if err != nil {
		s.t.Fatalf("%s: %v", action, err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil || resp.StatusCode != 200 {
		s.t.Fatalf("%s: %d %s", action, resp.StatusCode, body)
	}
	return out["result"].(map[string]any)
}

// An uploaded CSV is loaded from the FileStore; a replaced upload reloads
// the table.
func TestLoaderFromUploads(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		ed := s.tok["eddie"]
		s.ok(ed, "package_create", map[string]any{"name": "uploads", "owner_org": "lab"})
		res := s.upload(ed, "resource_create", map[string]string{"package_id": "uploads", "name": "viability"}, "viability.csv",
			[]byte("compound,conc,viability\naspirin,1,0.98\ncaffeine,10,0.71\n"))
		rid := res["id"].(string)
		if res["url_type"] != "upload" {
			t.Fatalf("not an upload: %v", res)
		}
		if st := s.waitLoad(rid, time.Minute); st["status"] != "complete" {
			t.Fatalf("load of an upload: %v", st)
		}
		r := s.search("", map[string]any{"resource_id": rid, "fields": "compound,conc,viability", "sort": "_id"})
		if jsonText(r["records"]) != `[{"compound":"aspirin","conc":1,"viability":0.98},{"compound":"caffeine","conc":10,"viability":0.71}]` {
			t.Fatalf("uploaded table: %s", jsonText(r["records"]))
		}
		// replacing the file reloads the table
		s.upload(ed, "resource_patch", map[string]string{"id": rid}, "viability2.tsv", []byte("compound\tn\nx\t1\ny\t2\nz\t3\n"))
		deadline := time.Now().Add(time.Minute)
		for {
			st := s.waitLoad(rid, time.Minute)
			r := s.search("", map[string]any{"resource_id": rid, "fields": "compound,n", "sort": "_id"})
			if st["status"] == "complete" && jsonText(r["records"]) == `[{"compound":"x","n":1},{"compound":"y","n":2},{"compound":"z","n":3}]` {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not reloaded after a new upload: %v %s", st, jsonText(r["records"]))
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
