package model

import (
	"sort"
	"strconv"
	"strings"
	"toxgate/sdk/textmatch"
)

// chemical is one row of httk's chemical table (raw strings where httk
// stores distributions or lists).
type chemical struct {
	Name, CAS, DTXSID   string
	MW, logP, logMA     float64
	hasMW, hasLogP      bool
	hasLogMA            bool
	pKaDonor, pKaAccept string
	clint, clintP       map[string]string
	fup, rb2p           map[string]string
	caco2, fabs, fgut   string
	fhep                string
	foral               map[string]string
}

// splitNums parses "a,b,c" into numbers; empty or "NA" gives nil.
func splitNums(s string) []float64 {
	s = strings.TrimSpace(s)
	if s == "" || s == "NA" {
		return nil
	}
	var out []float64
	for _, p := range strings.Split(s, ",") {
		if v, err := strconv.ParseFloat(strings.TrimSpace(p), 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// point returns the first number of a value or distribution string.
func point(s string) (float64, bool) {
	v := splitNums(s)
	if len(v) == 0 {
		return 0, false
	}
	return v[0], true
}

// lookup finds a chemical by name, CAS or DTXSID (case- and
// punctuation-insensitive for names).
func (t *tables) lookup(q string) (*chemical, bool) {
	q = strings.TrimSpace(q)
	for _, k := range []string{strings.ToLower(q), normName(q)} {
		if i, ok := t.byKey[k]; ok && k != "" {
			return t.chem(i), true
		}
	}
	return nil, false
}

// usableFor reports the parameters a chemical lacks for a pbtk simulation
// in the given species (empty when usable).
func (c *chemical) missingFor(species string, defaultToHuman bool) []string {
	var miss []string
	if !c.hasMW {
		miss = append(miss, "MW")
	}
	if !c.hasLogP {
		miss = append(miss, "logP")
	}
	if _, ok := c.clintFor(species, defaultToHuman); !ok {
		miss = append(miss, species+".Clint")
	}
	if f, ok := c.fupFor(species, defaultToHuman); !ok {
		miss = append(miss, species+".Funbound.plasma")
	} else if f == 0 {
		miss = append(miss, species+".Funbound.plasma above the limit of detection (measured 0)")
	}
	return miss
}

// clintFor returns the raw Clint string and p-value string to use.
func (c *chemical) clintFor(species string, defaultToHuman bool) ([2]string, bool) {
	if v := c.clint[species]; len(splitNums(v)) > 0 {
		return [2]string{v, c.clintP[species]}, true
	}
	if defaultToHuman {
		if v := c.clint["Human"]; len(splitNums(v)) > 0 {
			return [2]string{v, c.clintP["Human"]}, true
		}
	}
	return [2]string{}, false
}

// fupFor returns the point fup to use, substituting human when allowed
// (also when the species value is 0, as httk does).
func (c *chemical) fupFor(species string, defaultToHuman bool) (float64, bool) {
	v, ok := point(c.fup[species])
	if (!ok || (v == 0 && species != "Human")) && defaultToHuman {
		if h, okh := point(c.fup["Human"]); okh {
			return h, true
		}
	}
	return v, ok
}

// suggest returns up to n chemical names closest to q that can be simulated
// for the species (edit distance on normalised names; names that contain
// the query rank first).
func (t *tables) suggest(q, species string, defaultToHuman bool, n int) []string {
	nq := normName(q)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for i := range t.rows {
		c := t.chem(i)
		if len(c.missingFor(species, defaultToHuman)) > 0 {
			continue
		}
		nn := normName(c.Name)
		d := textmatch.Levenshtein(nq, nn)
		if nq != "" && strings.Contains(nn, nq) {
			d = (len(nn) - len(nq)) / 4
		}
		cs = append(cs, cand{c.Name, d})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs {
		if len(out) == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}
