// Package search is the catalog's in-memory full-text and faceted index: a
// small subset of what CKAN asks of Solr (dismax relevance over weighted
// fields with CKAN's minimum-match rule, Lucene-style field queries and
// filters, sorting, paging and facet counts). It holds plain documents and
// knows nothing of datasets or permissions; callers pass a filter for those.
package search

import (
	"strings"
	"unicode"
)

// Tokens splits s into lowercase word tokens (letters and digits), with a
// light English plural folding so "studies" finds "study" and "rats" "rat".
func Tokens(s string) []string {
	var out []string
	start := -1
	lower := strings.ToLower(s)
	for i, r := range lower {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			out = append(out, Stem(lower[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, Stem(lower[start:]))
	}
	return out
}

// Stem folds common English plural endings.
func Stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(w, "ses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:n-2]
	case n > 3 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		return w[:n-1]
	}
	return w
}
