package citation

import (
	"sort"
	"strings"
)

// Format is one rendering of a citation.
type Format struct {
	// Name is the `format` argument ("bibtex", "ris", ...).
	Name string
	// File is the last path segment that serves it under /dataset/{id}/.
	File string
	// MediaType is its Content-Type.
	MediaType string
	// Label names it on the dataset page.
	Label  string
	render func(Work) []byte
}

// Render renders w in f.
func (f Format) Render(w Work) []byte { return f.render(w) }

// Formats are the renderings, by name.
var Formats = map[string]Format{
	"text":          {Name: "text", File: "citation.txt", MediaType: "text/plain; charset=utf-8", Label: "Text", render: func(w Work) []byte { return []byte(Text(w) + "\n") }},
	"csl-json":      {Name: "csl-json", File: "citation.json", MediaType: "application/vnd.citationstyles.csl+json", Label: "CSL-JSON", render: CSLJSON},
	"bibtex":        {Name: "bibtex", File: "citation.bib", MediaType: "application/x-bibtex; charset=utf-8", Label: "BibTeX", render: BibTeX},
	"ris":           {Name: "ris", File: "citation.ris", MediaType: "application/x-research-info-systems; charset=utf-8", Label: "RIS", render: RIS},
	"datacite-json": {Name: "datacite-json", File: "datacite.json", MediaType: "application/vnd.datacite.datacite+json", Label: "DataCite JSON", render: DataCiteJSON},
	"datacite-xml":  {Name: "datacite-xml", File: "datacite.xml", MediaType: "application/vnd.datacite.datacite+xml", Label: "DataCite XML", render: DataCiteXML},
}

// FormatNames lists the format names, sorted (for error messages).
func FormatNames() string {
	names := make([]string, 0, len(Formats))
	for n := range Formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// OrderedFormats lists the formats in the order the page links them.
func OrderedFormats() []Format {
	out := make([]Format, 0, len(Formats))
	for _, n := range []string{"bibtex", "ris", "csl-json", "datacite-xml", "datacite-json", "text"} {
		out = append(out, Formats[n])
	}
	return out
}
