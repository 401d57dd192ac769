package catalog

import (
	"mime"
	"testing"
)

// guessFormat takes a compressed file by the format inside, as CKAN does.
func TestGuessFormatOfCompressedFiles(t *testing.T) {
	if mime.TypeByExtension(".csv") == "" {
		if err := mime.AddExtensionType(".csv", "text/csv"); err != nil {
			t.Fatal(err)
		}
	}
	for url, want := range map[string]string{
		"http://example.org/a.csv":        "CSV",
		"http://example.org/a.csv.gz":     "CSV",
		"http://example.org/a.csv.gz?x=1": "CSV",
		"http://example.org/a.gz":         "",
		"http://example.org/.gz":          "",
		"http://example.org/a":            "",
	} {
		if got := guessFormat(url); got != want {
			t.Errorf("guessFormat(%q) = %q, want %q", url, got, want)
		}
	}
}
