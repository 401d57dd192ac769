package search

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// hostileQueries are query strings built to exhaust the parser's stack,
// time or memory, each with the text its error must hold ("" when it must
// parse).
var hostileQueries = []struct {
	name, q, err string
}{
	{"8 MB of dashes", strings.Repeat("-", 8_388_000) + "x", "query is too long: 8388001 bytes"},
	{"dashes within the length", strings.Repeat("-", MaxQueryBytes-1) + "x", ""},
	{"bangs and pluses", strings.Repeat("!+", MaxQueryBytes/2-1) + "x", ""},
	{"NOT words", strings.Repeat("NOT ", MaxQueryBytes/4-1) + "x", ""},
	{"dash words", strings.Repeat("- ", MaxQueryBytes/2-1) + "x", ""},
	{"field prefixes", strings.Repeat("-", MaxQueryBytes-10) + "tags:herg", ""},
	{"field colons", strings.Repeat("a: ", MaxQueryBytes/3-1) + "x", ""},
	{"open parentheses", strings.Repeat("(", MaxQueryBytes), "nests parentheses more than 32 deep"},
	{"8 MB of open parentheses", strings.Repeat("(", 8<<20), "query is too long"},
	{"parentheses past the depth", strings.Repeat("(", MaxDepth+1) + "x" + strings.Repeat(")", MaxDepth+1), "more than 32 deep"},
	{"parentheses at the depth", strings.Repeat("(", MaxDepth) + "x" + strings.Repeat(")", MaxDepth), ""},
	{"negated groups at the depth", strings.Repeat("-(", MaxDepth) + "x" + strings.Repeat(")", MaxDepth), ""},
	{"groups in fields", strings.Repeat("tags:(", MaxDepth+1) + "x" + strings.Repeat(")", MaxDepth+1), "more than 32 deep"},
	{"too many terms", "tags:x" + strings.Repeat(" OR tags:x", MaxClauses), "too many clauses"},
	{"terms at the limit", "tags:x" + strings.Repeat(" OR tags:x", MaxClauses-1), ""},
	{"a term of many tokens", "title:" + strings.Repeat("a-", MaxClauses) + "b", "too many clauses"},
	{"a phrase of many tokens", `text:"` + strings.Repeat("a ", MaxClauses) + `b"`, "too many clauses"},
	{"many wildcards", "name:x" + strings.Repeat(" OR name:a*", MaxWildcards+1), "too many wildcard terms"},
	{"wildcards at the limit", "name:x" + strings.Repeat(" OR text:a?", MaxWildcards), ""},
	{"many ranges", "x:[a TO b]" + strings.Repeat(" x:[a TO b]", MaxClauses), "too many clauses"},
	{"an unterminated quote, long", `name:"` + strings.Repeat("a", MaxQueryBytes-7), "unterminated quoted string"},
}

// The hostile queries are parsed in linear time into small trees, or
// refused with an *Error naming the bound.
func TestParseHostileQueries(t *testing.T) {
	for _, c := range hostileQueries {
		t.Run(c.name, func(t *testing.T) {
			n, err := Parse(c.q)
			checkParsed(t, c.q, n, err)
			if c.err == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one with %q", err, c.err)
			}
		})
	}
}

// checkParsed checks what Parse gave for q: an *Error of bounded length, or
// a tree within the bounds.
func checkParsed(t *testing.T, q string, n node, err error) {
	t.Helper()
	if err != nil {
		var se *Error
		if !errors.As(err, &se) || se.Message == "" {
			t.Fatalf("error %T %v: want a *search.Error with a message", err, err)
		}
		if len(se.Message) > min(len(q), MaxQueryBytes)+100 {
			t.Fatalf("error message of %d bytes for a query of %d", len(se.Message), len(q))
		}
		return
	}
	if n == nil {
		t.Fatal("no tree and no error")
	}
	// each level of parentheses adds at most an or, an and and two nots
	if d := treeDepth(n); d > 4*(MaxDepth+1)+1 {
		t.Fatalf("tree %d deep", d)
	}
	if c := termCount(n); c > MaxClauses {
		t.Fatalf("%d terms", c)
	}
}

func treeDepth(n node) int {
	d := 0
	switch x := n.(type) {
	case andNode:
		for _, c := range x {
			d = max(d, treeDepth(c))
		}
	case orNode:
		for _, c := range x {
			d = max(d, treeDepth(c))
		}
	case notNode:
		d = treeDepth(x.n)
	}
	return d + 1
}

func termCount(n node) int {
	c := 0
	switch x := n.(type) {
	case andNode:
		for _, e := range x {
			c += termCount(e)
		}
	case orNode:
		for _, e := range x {
			c += termCount(e)
		}
	case notNode:
		c = termCount(x.n)
	default:
		c = 1
	}
	return c
}

// referenceQueries are queries of every form of the grammar.
var referenceQueries = []string{
	`tags:herg`, `tags:"in vitro"`, `-tags:herg`, `tags:herg AND organization:tox-lab`, `tags:x OR organization:tox-lab`,
	`tags:(x OR herg)`, `NOT tags:x`, `title:blockers`, `organization:tox*`, `metadata_modified:[2024-01-01T00:00:00Z TO *]`,
	`herg`, `tags:*`, `extras_x:*`, `+(tags:herg)`, `+tags:herg`, `+(tags:x OR organization:tox-lab) +tags:herg`,
	`+(tags:x) tags:herg`, `-(tags:herg)`, `--tags:herg`, `---tags:herg`, `NOT NOT tags:x`, `NOT - ! tags:x`, `+-x`, `-+x`,
	`!!!x`, `- - x`, `-`, `NOT`, `+`, `tags:`, `tags: (a OR b)`, `a: b: c`, `a: -b`, `-:x`, `:`, `(a OR (b AND -(c OR !d)))`,
	`tags:(-a +b)`, `a OR`, `OR a`, `a AND`, `(a`, `a)`, `()`, `tags:"open`, `tags:[a b]`, `tags:{a TO b}`, `-"a b"`,
	`\-x`, `a\:b:c`, `-(-(-(x)))`, `x AND AND y`, `NOT)`, `+(`, `-tags:(a OR -b) OR NOT name:c*`,
}

// Parse gives the reference parser's trees (negation chains folded) and
// errors on queries of every form.
func TestParseMatchesReference(t *testing.T) {
	for _, q := range referenceQueries {
		compareWithReference(t, q)
	}
}

// compareWithReference checks Parse against refParse on q; q must be small
// enough for refParse's recursion.
func compareWithReference(t *testing.T, q string) {
	t.Helper()
	got, err := Parse(q)
	want, refErr := refParse(q)
	if err != nil {
		var se *Error
		if errors.As(err, &se) && isBoundError(se) {
			return
		}
		if refErr == nil || err.Error() != refErr.Error() {
			t.Fatalf("%q: error %v, reference %v", q, err, refErr)
		}
		return
	}
	if refErr != nil {
		t.Fatalf("%q: parsed, reference error %v", q, refErr)
	}
	if strings.Contains(q, "NOW") {
		return // the time of day in the bounds differs
	}
	if got, want = normalizeRef(got), normalizeRef(want); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %#v, reference %#v", q, got, want)
	}
}

// isBoundError reports whether e is a refusal past one of the bounds.
func isBoundError(e *Error) bool {
	for _, s := range []string{"too long", "nests parentheses", "too many"} {
		if strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}

// Search applies the bounds to each of its inputs and shares the clause
// budget between q and the filters; start and rows of any size page.
func TestSearchBounds(t *testing.T) {
	ix := New()
	for i := range 5 {
		ix.Put(&Doc{ID: fmt.Sprintf("d%d", i), Fields: map[string][]string{"name": {fmt.Sprintf("n%d", i)}, "tags": {"herg"}},
			Text: map[string]float64{"herg": 1}, Sort: map[string]string{"name": fmt.Sprintf("n%d", i)}})
	}
	half := "tags:x" + strings.Repeat(" OR tags:x", MaxClauses/2)
	refused := map[string]Query{
		"long q":               {Q: strings.Repeat("-", 8_388_000) + "x"},
		"long free text q":     {Q: strings.Repeat("herg ", MaxQueryBytes/5+1)},
		"long fq":              {Filters: []string{strings.Repeat("-", 8_388_000) + "x"}},
		"long sort":            {Sort: strings.Repeat("name asc,", MaxQueryBytes/9+1)},
		"clauses over filters": {Filters: []string{half, half}},
		"clauses over q and fq": {Q: "tags:x" + strings.Repeat(" tags:x", MaxClauses/2),
			Filters: []string{half}},
		"free text tokens": {Q: strings.Repeat("a ", MaxClauses+1)},
		"facet fields":     {FacetFields: make([]string, MaxFacetFields+1)},
	}
	for name, q := range refused {
		_, err := ix.Search(q)
		var se *Error
		if !errors.As(err, &se) || !isBoundError(se) {
			t.Errorf("%s: %v, want a bound's *Error", name, err)
		}
	}
	accepted := map[string]Query{
		"largest start":      {Start: math.MaxInt, Rows: 10},
		"largest rows":       {Start: 2, Rows: math.MaxInt},
		"both":               {Start: math.MaxInt, Rows: math.MaxInt},
		"repeated sort keys": {Sort: strings.Repeat("name desc, ", 100) + "id asc", Rows: 10},
		"repeated facets":    {FacetFields: []string{"tags", "tags", "name"}, FacetLimit: -1},
		"half the clauses":   {Filters: []string{half}},
	}
	for name, q := range accepted {
		res, err := ix.Search(q)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.Count != 5 && name != "half the clauses" {
			t.Errorf("%s: count %d", name, res.Count)
		}
	}
	res, _ := ix.Search(accepted["largest rows"])
	if !reflect.DeepEqual(res.IDs, []string{"d2", "d3", "d4"}) {
		t.Errorf("start 2, all rows: %v", res.IDs)
	}
	res, _ = ix.Search(accepted["repeated sort keys"])
	if !reflect.DeepEqual(res.IDs, []string{"d4", "d3", "d2", "d1", "d0"}) {
		t.Errorf("name desc: %v", res.IDs)
	}
	if keys, _ := parseSort(accepted["repeated sort keys"].Sort); len(keys) != 3 {
		t.Errorf("sort keys %v: want name desc, id asc and the final id", keys)
	}
	res, _ = ix.Search(accepted["repeated facets"])
	if len(res.Facets) != 2 || len(res.Facets["tags"]) != 1 || res.Facets["tags"][0].Count != 5 {
		t.Errorf("facets %v", res.Facets)
	}
}

// FuzzParseQuery parses any q or fq: no panic, an *Error of bounded size or
// a tree within the bounds, the reference parser's tree on small queries,
// and Search runs it as q and as a filter without panicking.
func FuzzParseQuery(f *testing.F) {
	for _, q := range referenceQueries {
		f.Add(q)
	}
	for _, c := range hostileQueries {
		if len(c.q) <= 2*MaxQueryBytes {
			f.Add(c.q)
		}
	}
	f.Add(strings.Repeat("-", MaxQueryBytes+1) + "x")
	f.Add(strings.Repeat("-(", 40) + "x")
	f.Add("title:" + strings.Repeat("x", 100) + "* OR name:[a TO NOW]")
	ix := New()
	for i := range 20 {
		ix.Put(&Doc{ID: fmt.Sprintf("d%d", i), Fields: map[string][]string{"name": {fmt.Sprintf("n%d", i)}, "tags": {"herg", "rat"},
			"title": {"hERG blockers in rats"}}, Text: map[string]float64{"herg": 1, "blocker": 1, "rat": 1},
			Sort: map[string]string{"name": fmt.Sprintf("n%d", i)}})
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, err := Parse(q)
		checkParsed(t, q, n, err)
		if len(q) <= 4096 {
			compareWithReference(t, q)
		}
		for _, query := range []Query{{Q: q, Rows: 5, FacetFields: []string{"tags"}}, {Filters: []string{q}, Sort: q, Rows: 5}} {
			if _, err := ix.Search(query); err != nil {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("Search: %T %v, want a *search.Error", err, err)
				}
			}
		}
	})
}
