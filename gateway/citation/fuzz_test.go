package citation

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"toxgate/gateway/dcat"
)

var risLine = regexp.MustCompile(`^[A-Z][A-Z0-9]  - `)

// FuzzRenderers: whatever a dataset's title, notes, author, creators and
// version hold, every rendering stays one well-formed record: BibTeX with
// balanced braces and one entry, RIS with one tag per line, well-formed
// XML and valid JSON.
func FuzzRenderers(f *testing.F) {
	f.Add(`hERG {screen} 50% & $x$`, "notes\nER  - \nTY  - JOUR", "Silva, Ana; Costa, B.", `["Doe, J", {"name":"Lab","organization":true}]`, "1.0")
	f.Add(`}}}{{{\\`, "\r\n@misc{x,", " and and ", `[{"given":"","family":""}]`, "\x00\x01")
	f.Add("\u2028\u0085", "", "", "not json ;;; ; x", "v2}")
	f.Fuzz(func(t *testing.T, title, notes, author, creators, version string) {
		p := &dcat.Package{Name: "d", Title: title, Notes: &notes, Author: &author, Version: &version,
			Extras: []struct{ Key, Value string }{{Key: "creators", Value: creators}}}
		w := FromPackage(p, Site{Title: title, URL: "https://x"}, nil)

		bib := string(BibTeX(w))
		depth := 0
		for i := 0; i < len(bib); i++ {
			switch bib[i] {
			case '\\':
				i++ // an escaped character
			case '{':
				depth++
			case '}':
				depth--
				if depth < 0 {
					t.Fatalf("unbalanced BibTeX:\n%s", bib)
				}
			}
		}
		if depth != 0 || strings.Count(bib, "\n@") != 0 {
			t.Fatalf("BibTeX is not one balanced entry:\n%s", bib)
		}

		lines := strings.Split(strings.TrimSuffix(string(RIS(w)), "\r\n"), "\r\n")
		for _, l := range lines {
			if !risLine.MatchString(l) && l != "ER  - " {
				t.Fatalf("RIS line %q", l)
			}
		}
		ty := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "TY  - ") {
				ty++
			}
		}
		if lines[0] != "TY  - DATA" || lines[len(lines)-1] != "ER  - " || ty != 1 {
			t.Fatalf("RIS is not one record: %q", lines)
		}

		dec := xml.NewDecoder(bytes.NewReader(DataCiteXML(w)))
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("DataCite XML: %v\n%s", err, DataCiteXML(w))
			}
		}
		if !json.Valid(CSLJSON(w)) || !json.Valid(DataCiteJSON(w)) {
			t.Fatal("invalid JSON")
		}
	})
}
