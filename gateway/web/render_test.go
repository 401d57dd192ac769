package web

import (
	"bytes"
	"strings"
	"testing"
)

// Every catalog and model template renders with hostile text as text.
func TestTemplatesRenderAndEscape(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	evil := `<script>alert(1)</script>`
	size := int64(2048)
	d := Dataset{ID: "id1", Name: "ds", Title: evil, Notes: "**b** " + evil, Author: evil, Private: true,
		Organization: &Organization{Name: "org", Title: evil}, Tags: []Tag{{Name: evil}}, Extras: []Extra{{Key: evil, Value: evil}},
		Resources: []Resource{{ID: "r1", Name: evil, Format: evil, URL: "javascript:alert(1)", Size: &size, Description: evil},
			{ID: "r2", URL: "http://h/dataset/id1/resource/r2/download/a.csv", URLType: "upload"}}}
	pages := map[string]any{
		"dataset":        datasetData{D: d, Notes: markdown(d.Notes), CanEdit: true},
		"dataset_search": searchData{Q: evil, Datasets: []Dataset{d}, Count: 1, Base: "/dataset", Facets: []Facet{{Field: "tags", Title: "Tags", Items: []FacetLink{{Name: evil, Label: evil, Count: 1, Href: "/dataset?tags=x"}}}}},
		"resource":       resourceData{D: d, R: d.Resources[0], Description: markdown(evil), Preview: &preview{Header: []string{evil}, Rows: [][]string{{evil}}}, CanEdit: true},
		"organizations":  orgsData{Orgs: []Organization{{Name: "org", Title: evil, Description: evil}}},
		"organization":   searchData{Org: &Organization{Name: "org", Title: evil, Description: evil}, Base: "/organization/org"},
		"dataset_form":   datasetFormData{Form: datasetForm{Title: evil}, Orgs: []Organization{{ID: "o", Title: evil}}, Errors: []string{evil}},
		"resource_form":  resourceFormData{D: d, Errors: []string{evil}, MaxBytes: 1 << 30},
		"model": modelData{M: ModelInfo{Name: "m", Title: evil, Card: ModelCard{Summary: evil, Units: map[string]string{"x": evil}}},
			Card:   []cardSection{{"Summary", markdown(evil)}},
			Routes: []modelRouteView{{Path: "/m", Fields: []ModelField{{Name: "x", Label: evil, Type: "number", Unit: evil, Value: evil, Min: "0"}, {Name: "smiles", List: true, Value: evil}}}},
			CanRun: true, Result: &modelResult{Columns: []string{evil}, Rows: [][]string{{evil}}, Summary: [][2]string{{evil, evil}}, JSON: evil}},
	}
	for page, data := range pages {
		var buf bytes.Buffer
		if err := w.pages[page].ExecuteTemplate(&buf, "layout.html", view{Title: evil, Data: data, CSRF: "c"}); err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		html := buf.String()
		if strings.Contains(html, "<script>alert") || strings.Contains(html, `href="javascript:`) {
			t.Errorf("%s: hostile text became markup:\n%s", page, html)
		}
	}
}
