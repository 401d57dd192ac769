package dcat

import "testing"

// TestNegotiate checks which Accept headers get RDF, on the catalog (RDF
// only) and on a dataset's page (where HTML is on offer and wins ties).
func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		accept string
		page   bool
		want   string // media type, "" for none (the page, or 406)
	}{
		{"", false, "text/turtle"},
		{"", true, ""},
		{"*/*", false, "text/turtle"},
		{"*/*", true, ""},
		{"text/turtle", true, "text/turtle"},
		{"application/rdf+xml;q=0.9, application/ld+json", false, "application/ld+json"},
		{"application/rdf+xml; q=1.0, application/ld+json; q=0.6", true, "application/rdf+xml"},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true, ""},
		{"text/html;q=0.5, text/turtle", true, "text/turtle"},
		{"text/html", false, ""},
		{"text/turtle;q=0", false, ""},
		{"image/png", true, ""},
	} {
		f, ok := negotiate(c.accept, c.page)
		got := ""
		if ok {
			got = f.mediaType
		}
		if got != c.want {
			t.Errorf("negotiate(%q, page=%v) = %q, want %q", c.accept, c.page, got, c.want)
		}
	}
}
