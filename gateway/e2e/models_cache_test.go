package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"toxgate/gateway/harness"
)

// cacheCounters reads the response cache's counters of module herg.
func cacheCounters(t *testing.T, g *harness.Gateway) (hits, misses float64) {
	t.Helper()
	return metricValue(t, g, `toxgate_model_cache_hits_total{module="herg"}`), metricValue(t, g, `toxgate_model_cache_misses_total{module="herg"}`)
}

// The response cache through the real gateway and the hERG module: a
// second identical call (white space and escapes aside) is a hit with the
// same body; a list with duplicates computes each distinct structure once
// (the miss counter grows by the distinct items, the hit counter by the
// others) and answers exactly what the gateway without a cache answers,
// row errors included, across batch slices; a second list mixes kept and
// new items; replacing a module (example-units) drops its entries, its
// next call is a miss, and another module's answers stay.
func TestModelResponseCache(t *testing.T) {
	g, _ := modelsGateway(t, []string{"herg", "example-units"},
		harness.WithEnv("TOXGATE_MODULES_BATCH_SLICE_ITEMS=2", "TOXGATE_CATALOG_PUBLISH_MODELS=false"))
	off, _ := modelsGateway(t, []string{"herg"},
		harness.WithEnv("TOXGATE_MODULES_BATCH_SLICE_ITEMS=2", "TOXGATE_CATALOG_PUBLISH_MODELS=false", "TOXGATE_MODULES_RESPONSE_CACHE_BYTES=0"))
	admin := adminToken(t, g)
	provision(t, g, admin, "screener", "screener-password-1", true, "models")
	tok := http.Header{"Authorization": {"Bearer " + tokenFor(t, g, admin, "screener", nil)}}
	offAdmin := adminToken(t, off)
	provision(t, off, offAdmin, "screener", "screener-password-1", true, "models")
	offTok := http.Header{"Authorization": {"Bearer " + tokenFor(t, off, offAdmin, "screener", nil)}}

	code, h, first := postJSON(t, g, "/hERG/evaluate", `{"smiles":"CCO"}`, tok)
	if code != 200 || h.Get("X-Cache") != "miss" {
		t.Fatalf("first call: %d X-Cache %q %s", code, h.Get("X-Cache"), first)
	}
	code, h, second := postJSON(t, g, "/hERG/evaluate", " { \"smiles\" : \"C\\u0043O\" } ", tok)
	if code != 200 || h.Get("X-Cache") != "hit" || !bytes.Equal(first, second) {
		t.Fatalf("second call: %d X-Cache %q\n%s\nwant\n%s", code, h.Get("X-Cache"), second, first)
	}
	if hits, misses := cacheCounters(t, g); hits != 1 || misses != 1 {
		t.Fatalf("counters after two calls: %v hits, %v misses", hits, misses)
	}
	code, h, out := postJSON(t, g, "/hERG/evaluate", `{"smiles":"CC(C)Xx"}`, tok)
	if code != 422 || h.Get("X-Cache") != "" {
		t.Fatalf("a bad SMILES: %d X-Cache %q %s", code, h.Get("X-Cache"), out)
	}
	if code, _, _ = postJSON(t, g, "/hERG/evaluate", `{"smiles":"CC(C)Xx"}`, tok); code != 422 {
		t.Fatalf("a bad SMILES again (errors are not kept): %d", code)
	}

	// 10 items, 5 distinct (two of them bad), in slices of 2.
	list := []string{"c1ccccc1O", "CCN(CC)CC", "c1ccccc1O", "Xx1", "CCN(CC)CC", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O", "Xx1", "C1CC", "CCN(CC)CC"}
	body, _ := json.Marshal(map[string]any{"smiles": list})
	hits0, misses0 := cacheCounters(t, g)
	code, h, batch := postJSON(t, g, "/hERG/evaluate", string(body), tok)
	if code != 200 || h.Get("X-Cache") != "miss" {
		t.Fatalf("list with duplicates: %d X-Cache %q %s", code, h.Get("X-Cache"), batch)
	}
	if hits, misses := cacheCounters(t, g); misses-misses0 != 5 || hits-hits0 != 5 {
		t.Fatalf("list of 10 with 5 distinct: %v computed, %v not", misses-misses0, hits-hits0)
	}
	code, h, want := postJSON(t, off, "/hERG/evaluate", string(body), offTok)
	if code != 200 || h.Get("X-Cache") != "" {
		t.Fatalf("without a cache: %d X-Cache %q %s", code, h.Get("X-Cache"), want)
	}
	if !bytes.Equal(batch, want) {
		t.Fatalf("answer with the cache:\n%s\nwithout:\n%s", batch, want)
	}
	code, h, again := postJSON(t, g, "/hERG/evaluate", string(body), tok)
	if code != 200 || h.Get("X-Cache") != "hit" || !bytes.Equal(again, want) {
		t.Fatalf("the list again: %d X-Cache %q\n%s", code, h.Get("X-Cache"), again)
	}
	if _, misses := cacheCounters(t, g); misses-misses0 != 5 {
		t.Fatalf("the list again computed %v items", misses-misses0-5)
	}
	mixed, _ := json.Marshal(map[string]any{"smiles": []string{"Xx1", "CCCCO", "c1ccccc1O", "CCCCO", "Xx2"}})
	code, h, part := postJSON(t, g, "/hERG/evaluate", string(mixed), tok)
	_, _, wantPart := postJSON(t, off, "/hERG/evaluate", string(mixed), offTok)
	if code != 200 || h.Get("X-Cache") != "miss" || !bytes.Equal(part, wantPart) {
		t.Fatalf("a list of kept and new items: %d X-Cache %q\n%s\nwant\n%s", code, h.Get("X-Cache"), part, wantPart)
	}
	if _, misses := cacheCounters(t, g); misses-misses0 != 7 {
		t.Fatalf("a list of 3 kept and 2 new items computed %v", misses-misses0-5)
	}

	// Replace a module with other bytes: its answers go, the others stay.
	const units = `{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`
	if code, h, out := postJSON(t, g, "/example/units/convert", units, tok); code != 200 || h.Get("X-Cache") != "miss" {
		t.Fatalf("example-units: %d X-Cache %q %s", code, h.Get("X-Cache"), out)
	}
	held := metricValue(t, g, "toxgate_model_cache_bytes")
	wasm, err := os.ReadFile(filepath.Join(harness.Build(t).Modules, "example-units.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	resp, rb, err := g.Do(context.Background(), http.MethodPost, "/admin/modules", http.Header{"Authorization": {admin}, "Content-Type": {"application/wasm"}}, withCustomSection(wasm, "v2"))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /admin/modules: %v %v %s", err, resp, rb)
	}
	if b := metricValue(t, g, "toxgate_model_cache_bytes"); b >= held || b <= 0 {
		t.Fatalf("after replacing example-units the cache holds %v bytes (%v before)", b, held)
	}
	if code, h, out := postJSON(t, g, "/example/units/convert", units, tok); code != 200 || h.Get("X-Cache") != "miss" {
		t.Fatalf("example-units after its replacement: %d X-Cache %q %s", code, h.Get("X-Cache"), out)
	}
	if code, h, out := postJSON(t, g, "/hERG/evaluate", `{"smiles":"CCO"}`, tok); code != 200 || h.Get("X-Cache") != "hit" || !bytes.Equal(out, first) {
		t.Fatalf("hERG after replacing another module: %d X-Cache %q %s", code, h.Get("X-Cache"), out)
	}
}

// The response cache stays within modules.response_cache_bytes: older
// answers are evicted (counted) and the newest is kept.
func TestModelResponseCacheBound(t *testing.T) {
	const bound = 16384
	g, _ := modelsGateway(t, []string{"herg"},
		harness.WithEnv("TOXGATE_CATALOG_PUBLISH_MODELS=false", fmt.Sprintf("TOXGATE_MODULES_RESPONSE_CACHE_BYTES=%d", bound)))
	admin := adminToken(t, g)
	provision(t, g, admin, "screener", "screener-password-1", true, "models")
	tok := http.Header{"Authorization": {"Bearer " + tokenFor(t, g, admin, "screener", nil)}}
	for i := 1; i <= 60; i++ {
		in := fmt.Sprintf(`{"smiles":"C%s"}`, bytes.Repeat([]byte("C"), i))
		code, _, out := postJSON(t, g, "/hERG/evaluate", in, tok)
		if code != 200 {
			t.Fatalf("%s: %d %s", in, code, out)
		}
		if i == 1 {
			t.Logf("one answer: %d bytes", len(out))
		}
		if b := metricValue(t, g, "toxgate_model_cache_bytes"); b > bound || b <= 0 {
			t.Fatalf("after %d answers the cache holds %v bytes (bound %d)", i, b, bound)
		}
	}
	if metricValue(t, g, "toxgate_model_cache_evictions_total") == 0 {
		t.Fatal("no eviction counted")
	}
	if code, h, _ := postJSON(t, g, "/hERG/evaluate", `{"smiles":"`+string(bytes.Repeat([]byte("C"), 61))+`"}`, tok); code != 200 || h.Get("X-Cache") != "hit" {
		t.Fatalf("the newest answer: %d X-Cache %q", code, h.Get("X-Cache"))
	}
	if code, h, _ := postJSON(t, g, "/hERG/evaluate", `{"smiles":"CC"}`, tok); code != 200 || h.Get("X-Cache") != "miss" {
		t.Fatalf("the oldest answer: %d X-Cache %q", code, h.Get("X-Cache"))
	}
}
