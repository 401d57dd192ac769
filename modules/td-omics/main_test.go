package main

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/module"
)

func call(t *testing.T, path, body string) map[string]any {
	t.Helper()
	b, err := module.Call(path, []byte(body))
	if err != nil {
		t.Fatalf("%s %s: %v", path, body, err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestManifest(t *testing.T) {
	m, err := module.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Routes) != 3 {
		t.Fatalf("routes %+v", m.Routes)
	}
}

func TestProteomicsOriginalExample(t *testing.T) {
	out := call(t, "/TD/proteomics/evaluate", `{"compound":"DOX","protein":"P16403"}`)
	rs, _ := out["results"].([]any)
	if len(rs) != 14 {
		t.Fatalf("%d results, want 14", len(rs))
	}
	if s, _ := out["plot_svg"].(string); !strings.HasPrefix(s, "<svg") || !strings.Contains(s, "time (h)") {
		t.Error("no plot_svg")
	}
	if _, ok := out["diagram"]; ok {
		t.Error("the old key diagram is still answered")
	}
	g := out["protein_group"].(map[string]any)
	if !strings.Contains(g["group"].(string), "P16403") {
		t.Errorf("group %v", g)
	}
}

func TestMetabolomicsOriginalExample(t *testing.T) {
	out := call(t, "/TD/metabolomics/evaluate", `{"compound":"DOX"}`)
	top := out["most_changed"].([]any)
	if len(top) != 30 {
		t.Fatalf("%d most-changed, want 15 per time point", len(top))
	}
	// At 24 h taurine is the most changed metabolite (q ≈ 1e-6, up 2.5-fold).
	first24 := top[15].(map[string]any)
	if first24["biochemical"] != "taurine" || first24["time_h"].(float64) != 24 ||
		math.Abs(first24["log2fc"].(float64)-1.337) > 0.01 {
		t.Errorf("top at 24 h: %v", first24)
	}
	if !strings.Contains(out["species"].(string), "rat") {
		t.Error("species not stated")
	}
}

func TestLipidomicsIsLipidSuperPathway(t *testing.T) {
	out := call(t, "/TD/lipidomics/evaluate", `{"compound":"DOX"}`)
	ms := out["metabolites"].([]any)
	if len(ms) != 17 {
		t.Errorf("%d lipids, want 17", len(ms))
	}
	for _, m := range ms {
		if m.(map[string]any)["super_pathway"] != "Lipid" {
			t.Fatalf("non-lipid %v", m)
		}
	}
	if !strings.Contains(out["note"].(string), "No dedicated public lipidomics") {
		t.Error("lipidomics note missing")
	}
}

func TestNoDataAndBadInput(t *testing.T) {
	cases := []struct{ path, body, field, msg string }{
		{"/TD/proteomics/evaluate", `{"compound":"AMI","protein":"P16403"}`, "compound", "no public proteomics"},
		{"/TD/proteomics/evaluate", `{"compound":"ROT","protein":"P16403"}`, "compound", "no public proteomics"},
		{"/TD/proteomics/evaluate", `{"compound":"DOX","protein":"B8ZZL8"}`, "protein", "closest"},
		{"/TD/proteomics/evaluate", `{"compound":"DOX","protein":""}`, "protein", "required"},
		{"/TD/metabolomics/evaluate", `{"compound":"AMI"}`, "compound", "no public metabolomics"},
		{"/TD/lipidomics/evaluate", `{"compound":"ROT"}`, "compound", "no public lipidomics"},
		{"/TD/metabolomics/evaluate", `{"compound":5}`, "compound", ""},
	}
	for _, c := range cases {
		_, err := module.Call(c.path, []byte(c.body))
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s %s: %v", c.path, c.body, err)
		}
	}
}

func BenchmarkProteomics(b *testing.B) {
	in := ProteomicsInput{Compound: "DOX", Protein: "P16403"}
	if _, err := proteomicsEval(in); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := proteomicsEval(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMetabolomics(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := metabolomicsEval(CompoundInput{Compound: "DOX"}, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLipidomics(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := metabolomicsEval(CompoundInput{Compound: "DOX"}, true); err != nil {
			b.Fatal(err)
		}
	}
}
