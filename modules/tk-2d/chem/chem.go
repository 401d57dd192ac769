// Package chem looks up the physico-chemical inputs of the in-vitro
// distribution model for a chemical named by the original platform's code
// (DOX, AMI, ROT, TBBPA), by name, CAS or DTXSID in httk 2.7.4's chemical
// table. Identity, MW, logP and pKa's come from the table the pbpk-httk
// module reads too (modules/internal/data); logHenry, logWSol and MP, which
// that subset lacks, from httk_physchem_supplement.csv.gz (see SOURCES.md).
package chem

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	shared "toxgate/modules/internal/data"
	"toxgate/sdk/invitro"
	"toxgate/sdk/textmatch"
)

//go:embed httk_physchem_supplement.csv.gz
var supplementGz []byte

// Codes maps the original platform's compound codes to CAS numbers.
var Codes = map[string]string{
	"DOX":   "23214-92-8", // doxorubicin
	"AMI":   "1951-25-3",  // amiodarone
	"ROT":   "83-79-4",    // rotenone
	"TBBPA": "79-94-7",    // 3,3',5,5'-tetrabromobisphenol A
}

// CodeList is the codes in display order.
var CodeList = []string{"DOX", "AMI", "ROT", "TBBPA"}

type table struct {
	chems []invitro.Chemical
	byKey map[string]int
}

var (
	once   sync.Once
	tab    *table
	tabErr error
)

func load() (*table, error) {
	once.Do(func() { tab, tabErr = build() })
	return tab, tabErr
}

func readGz(b []byte) ([][]string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(zr)
	r.ReuseRecord = false
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, rec)
	}
}

func col(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func build() (*table, error) {
	sup, err := readGz(supplementGz)
	if err != nil {
		return nil, fmt.Errorf("reading the physchem supplement: %w", err)
	}
	type pc struct{ henry, wsol, mp float64 }
	byCAS := make(map[string]pc, len(sup))
	for _, r := range sup[1:] {
		byCAS[r[0]] = pc{num(r[1]), num(r[2]), num(r[3])}
	}
	rows, err := readGz(shared.HTTKChemicalsGz)
	if err != nil {
		return nil, fmt.Errorf("reading the httk chemical table: %w", err)
	}
	h := rows[0]
	iName, iCAS, iDTX := col(h, "Compound"), col(h, "CAS"), col(h, "DTXSID")
	iMW, iLogP, iDon, iAcc := col(h, "MW"), col(h, "logP"), col(h, "pKa_Donor"), col(h, "pKa_Accept")
	if min(iName, iCAS, iDTX, iMW, iLogP, iDon, iAcc) < 0 {
		return nil, fmt.Errorf("httk chemical table lacks a needed column (header %v)", h)
	}
	t := &table{byKey: make(map[string]int, 3*len(rows))}
	for _, r := range rows[1:] {
		p, ok := byCAS[r[iCAS]]
		if !ok {
			p = pc{math.NaN(), math.NaN(), math.NaN()}
		}
		c := invitro.Chemical{Name: r[iName], CAS: r[iCAS], DTXSID: r[iDTX], MW: num(r[iMW]), LogP: num(r[iLogP]),
			LogHenry: p.henry, LogWSol: p.wsol, MP: p.mp, PKaDonor: r[iDon], PKaAccept: r[iAcc]}
		t.chems = append(t.chems, c)
		for _, k := range []string{norm(c.Name), strings.ToLower(c.CAS), strings.ToLower(c.DTXSID)} {
			if _, dup := t.byKey[k]; k != "" && !dup {
				t.byKey[k] = len(t.chems) - 1
			}
		}
	}
	return t, nil
}

// norm lower-cases and drops everything but letters and digits.
func norm(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Missing lists the inputs armitage_eval needs that c lacks.
func Missing(c invitro.Chemical) []string {
	var m []string
	if !(c.MW > 0) {
		m = append(m, "MW")
	}
	for _, f := range []struct {
		n string
		v float64
	}{{"logP", c.LogP}, {"logHenry", c.LogHenry}, {"logWSol", c.LogWSol}} {
		if math.IsNaN(f.v) {
			m = append(m, f.n)
		}
	}
	return m
}

// NotFoundError reports an unknown compound with close matches.
type NotFoundError struct {
	Query       string
	Suggestions []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("compound %q is not one of the codes %s nor a name, CAS or DTXSID of httk's chemical table; closest names: %s",
		e.Query, strings.Join(CodeList, ", "), strings.Join(e.Suggestions, "; "))
}

// Lookup returns the chemical for a code, name, CAS or DTXSID and the code
// when one was used (or when the chemical is one of the coded compounds).
func Lookup(q string) (invitro.Chemical, string, error) {
	t, err := load()
	if err != nil {
		return invitro.Chemical{}, "", err
	}
	q = strings.TrimSpace(q)
	code := ""
	key := q
	if cas, ok := Codes[strings.ToUpper(q)]; ok {
		code, key = strings.ToUpper(q), cas
	}
	i, ok := t.byKey[strings.ToLower(key)]
	if !ok {
		i, ok = t.byKey[norm(key)]
	}
	if !ok {
		return invitro.Chemical{}, "", &NotFoundError{q, t.suggest(q, 5)}
	}
	c := t.chems[i]
	if code == "" {
		for k, cas := range Codes {
			if cas == c.CAS {
				code = k
			}
		}
	}
	return c, code, nil
}

func (t *table) suggest(q string, n int) []string {
	nq := norm(q)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, c := range t.chems {
		if len(Missing(c)) > 0 {
			continue
		}
		nn := norm(c.Name)
		d := textmatch.Levenshtein(nq, nn)
		if nq != "" && strings.Contains(nn, nq) {
			d = (len(nn) - len(nq)) / 4
		}
		cs = append(cs, cand{c.Name, d})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}
