package search

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Bounds on what one search may ask. Past any of them Search (and Parse)
// gives an *Error that names the bound, before the documents are searched;
// within them a search's time and memory grow with the index, not with how
// the query is written.
const (
	// MaxQueryBytes is the longest q, fq, fq_list entry or sort string.
	MaxQueryBytes = 64 << 10
	// MaxClauses caps the terms of one search, counted over q and every
	// filter, a term of a tokenized field (the free text, title, notes...)
	// counting once per token: Solr's maxBooleanClauses (1024). Each such
	// term costs a bitset of the index or a pass over the documents.
	MaxClauses = 1024
	// MaxDepth caps how deeply parentheses nest in one query string.
	MaxDepth = 32
	// MaxWildcards caps the wildcard terms ("tox*", "h?rg") of one search:
	// each is matched against every token of the index or every document.
	MaxWildcards = 32
	// MaxFacetFields caps the facet.field names of one search (repeats
	// included; a repeated name is counted once).
	MaxFacetFields = 64
)

// budget is what is left of a search's MaxClauses and MaxWildcards while
// its query strings are parsed.
type budget struct {
	clauses, wildcards int
}

func newBudget() *budget { return &budget{clauses: MaxClauses, wildcards: MaxWildcards} }

// spend takes n clauses (and one wildcard if wild) from b.
func (b *budget) spend(n int, wild bool) error {
	b.clauses -= n
	if b.clauses < 0 {
		return &Error{Message: "too many clauses: q and fq hold more than " + strconv.Itoa(MaxClauses) + " terms"}
	}
	if wild {
		b.wildcards--
		if b.wildcards < 0 {
			return &Error{Message: "too many wildcard terms: q and fq hold more than " + strconv.Itoa(MaxWildcards)}
		}
	}
	return nil
}

// checkLength refuses a query-like string (what names it: "query",
// "sort") longer than MaxQueryBytes, without echoing it.
func checkLength(what, s string) error {
	if len(s) > MaxQueryBytes {
		return &Error{Message: what + " is too long: " + strconv.Itoa(len(s)) + " bytes, at most " + strconv.Itoa(MaxQueryBytes)}
	}
	return nil
}

// tokenCount is about len(Tokens(s)) (the runs of letters and digits),
// counted without allocating: what a term of a tokenized field costs.
func tokenCount(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); {
		c := s[i]
		var word bool
		if c < utf8.RuneSelf {
			word = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
			i += size
		}
		if word && !in {
			n++
		}
		in = word
	}
	return n
}

// tokenized reports whether terms of field match by tokens (field "" is
// the free text).
func tokenized(field string) bool {
	return field == "" || field == "text" || TextFields[field]
}
