package citation

import (
	"encoding/json"
	"strings"
)

// cslName is a CSL-JSON name variable: a person's parts or a literal.
type cslName struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Literal string `json:"literal,omitempty"`
}

// cslDate is CSL-JSON's date-parts form.
type cslDate struct {
	DateParts [][]int `json:"date-parts"`
}

// cslItem is one CSL-JSON item of type "dataset".
type cslItem struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Author    []cslName `json:"author,omitempty"`
	Issued    cslDate   `json:"issued"`
	Publisher string    `json:"publisher,omitempty"`
	Version   string    `json:"version,omitempty"`
	DOI       string    `json:"DOI,omitempty"`
	URL       string    `json:"URL,omitempty"`
	Abstract  string    `json:"abstract,omitempty"`
	Keyword   string    `json:"keyword,omitempty"`
	Genre     string    `json:"genre,omitempty"`
}

// CSLJSON renders w as a CSL-JSON array of one item (the input of
// citeproc processors, Zotero and pandoc).
func CSLJSON(w Work) []byte {
	it := cslItem{ID: w.Key, Type: "dataset", Title: w.Title, Publisher: w.Publisher, Version: w.Version,
		DOI: w.DOI, URL: w.URL, Abstract: w.Description, Keyword: strings.Join(w.Keywords, ", "), Genre: "Dataset",
		Issued: cslDate{DateParts: [][]int{{w.Issued.Year(), int(w.Issued.Month()), w.Issued.Day()}}}}
	for _, c := range w.Creators {
		if c.Organization || c.Family == "" {
			it.Author = append(it.Author, cslName{Literal: c.Name})
		} else {
			it.Author = append(it.Author, cslName{Family: c.Family, Given: c.Given})
		}
	}
	out, _ := json.MarshalIndent([]cslItem{it}, "", "  ") // cannot fail: plain types
	return append(out, '\n')
}
