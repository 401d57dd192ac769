package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// exampleTensors turns a route's example into OIP input tensors; false
// when a member has no tensor form (an object, a list of lists).
func exampleTensors(ex map[string]any) ([]map[string]any, bool) {
	var ins []map[string]any
	keys := make([]string, 0, len(ex))
	for k := range ex {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	typeOf := func(v any) string {
		switch v.(type) {
		case string:
			return "BYTES"
		case float64:
			return "FP64"
		case bool:
			return "BOOL"
		}
		return ""
	}
	for _, k := range keys {
		v := ex[k]
		if l, ok := v.([]any); ok {
			if len(l) == 0 || typeOf(l[0]) == "" {
				return nil, false
			}
			ins = append(ins, map[string]any{"name": k, "shape": []int{len(l)}, "datatype": typeOf(l[0]), "data": l})
			continue
		}
		if typeOf(v) == "" {
			return nil, false
		}
		ins = append(ins, map[string]any{"name": k, "shape": []int{1}, "datatype": typeOf(v), "data": []any{v}})
	}
	return ins, true
}

// For every shipped module, /v2/models/{name} lists, per route, the output
// tensors an infer call of the route's example returns: the same names, in
// the same order, with the same datatypes, and shapes that match (-1 for a
// dimension that comes from a list).
func TestOIPMetadataMatchesInferOutputs(t *testing.T) {
	g := harness.Start(t, harness.WithAllModules(), harness.WithoutReadyWait(),
		harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false", "TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	// Every module compiles first: on a busy machine that may take longer
	// than the harness's own wait. A module that failed to load (a start
	// past its deadline on an overloaded machine) is left out, named.
	deadline := time.Now().Add(20 * time.Minute)
	failed := map[string]bool{}
	for {
		_, body := get(t, g, "/readyz", nil)
		var rz struct {
			Models map[string]string `json:"models"`
		}
		json.Unmarshal(body, &rz)
		loading := 0
		for m, st := range rz.Models {
			switch st {
			case "loading":
				loading++
			case "failed":
				failed[m] = true
			}
		}
		if len(rz.Models) > 0 && loading == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("models still loading: %s", body)
		}
		time.Sleep(time.Second)
	}
	if len(failed) > 0 {
		t.Logf("modules that failed to load, not checked: %v", failed)
	}
	checked := map[string]bool{}
	for _, r := range modelRoutes(t, g) {
		if failed[r.Model] {
			continue
		}
		_, body := get(t, g, "/v2/models/"+r.Model, nil)
		var md struct {
			Routes []struct {
				Route   string      `json:"route"`
				Outputs []oipTensor `json:"outputs"`
			} `json:"routes"`
		}
		if err := json.Unmarshal(body, &md); err != nil {
			t.Fatalf("%s metadata: %v %s", r.Model, err, body)
		}
		var meta []oipTensor
		for _, rm := range md.Routes {
			if rm.Route == r.Path {
				meta = rm.Outputs
			}
		}
		ins, ok := exampleTensors(r.Example)
		if !ok {
			t.Logf("%s %s: the example has no tensor form; not checked", r.Model, r.Path)
			continue
		}
		req, _ := json.Marshal(map[string]any{"inputs": ins, "parameters": map[string]any{"route": r.Path}})
		resp, out, err := g.Do(context.Background(), http.MethodPost, "/v2/models/"+r.Model+"/infer", http.Header{"Content-Type": {"application/json"}}, req)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%s %s infer of the example: %v %v %.300s", r.Model, r.Path, err, resp, out)
			continue
		}
		var ans struct {
			Outputs []oipTensor `json:"outputs"`
		}
		json.Unmarshal(out, &ans)
		got, want := describe(ans.Outputs, nil), describe(meta, nil)
		if !slices.Equal(got, want) {
			t.Errorf("%s %s:\n infer returns %v\n metadata says %v", r.Model, r.Path, got, want)
			continue
		}
		for i, m := range meta {
			a := ans.Outputs[i]
			if len(m.Shape) != len(a.Shape) {
				t.Errorf("%s %s %s: shape %v, metadata %v", r.Model, r.Path, m.Name, a.Shape, m.Shape)
				continue
			}
			for d := range m.Shape {
				if m.Shape[d] != -1 && m.Shape[d] != a.Shape[d] {
					t.Errorf("%s %s %s: shape %v, metadata %v", r.Model, r.Path, m.Name, a.Shape, m.Shape)
				}
			}
		}
		checked[r.Model] = true
	}
	for _, m := range []string{"herg", "ahr", "pbpk-doxorubicin", "tk-2d", "example-units"} {
		if !checked[m] {
			t.Errorf("module %s was not checked (checked: %v)", m, checked)
		}
	}
}

// describe lists each tensor as name:datatype.
func describe(ts []oipTensor, out []string) []string {
	for _, x := range ts {
		out = append(out, fmt.Sprintf("%s:%s", x.Name, x.Datatype))
	}
	return out
}
