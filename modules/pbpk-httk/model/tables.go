package model

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	shared "toxgate/modules/internal/data"
	"toxgate/modules/pbpk-httk/data"
)

// species names as spelled in httk's tables.
var speciesNames = []string{"Human", "Rat", "Mouse", "Dog", "Rabbit"}

// tables holds the parsed httk tables.
type tables struct {
	phys    map[string]map[string]float64            // parameter -> species -> value
	tissue  map[string]map[string]map[string]float64 // species -> tissue -> variable -> value
	pearce  map[string][2]float64                    // tissue -> adjusted (intercept, slope)
	rows    [][]string                               // the chemical table's rows, without the header
	col     map[string]int                           // its column indexes by name
	byKey   map[string]int                           // normalised name, CAS, DTXSID -> row
	mu      sync.Mutex                               // guards chems
	chems   []*chemical                              // parsed rows, nil until asked for
	loadErr error
}

var (
	tabOnce sync.Once
	tab     tables
)

func loadTables() (*tables, error) {
	tabOnce.Do(func() { tab.loadErr = tab.load() })
	return &tab, tab.loadErr
}

func readCSV(b []byte) ([][]string, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	return r.ReadAll()
}

func parseNum(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s == "NA" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

func (t *tables) load() error {
	rows, err := readCSV(data.Physiology)
	if err != nil {
		return fmt.Errorf("physiology table: %w", err)
	}
	t.phys = map[string]map[string]float64{}
	hdr := rows[0]
	for _, r := range rows[1:] {
		m := map[string]float64{}
		for j := 2; j < len(r) && j < len(hdr); j++ {
			if v, ok := parseNum(r[j]); ok {
				m[hdr[j]] = v
			}
		}
		t.phys[r[0]] = m
	}
	rows, err = readCSV(data.Tissue)
	if err != nil {
		return fmt.Errorf("tissue table: %w", err)
	}
	t.tissue = map[string]map[string]map[string]float64{}
	for _, r := range rows[1:] {
		v, ok := parseNum(r[4])
		if !ok {
			continue
		}
		sp, ts := r[1], r[0]
		if t.tissue[sp] == nil {
			t.tissue[sp] = map[string]map[string]float64{}
		}
		if t.tissue[sp][ts] == nil {
			t.tissue[sp][ts] = map[string]float64{}
		}
		t.tissue[sp][ts][r[3]] = v
	}
	rows, err = readCSV(data.Pearce2017Regression)
	if err != nil {
		return fmt.Errorf("pearce2017 table: %w", err)
	}
	t.pearce = map[string][2]float64{}
	for _, r := range rows[1:] {
		a, ok1 := parseNum(r[1])
		b, ok2 := parseNum(r[2])
		if ok1 && ok2 {
			t.pearce[r[0]] = [2]float64{a, b}
		}
	}
	return t.loadChemicals()
}

func (t *tables) loadChemicals() error {
	zr, err := gzip.NewReader(bytes.NewReader(shared.HTTKChemicalsGz))
	if err != nil {
		return fmt.Errorf("chemical table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("chemical table: %w", err)
	}
	rows, err := readCSV(raw)
	if err != nil {
		return fmt.Errorf("chemical table: %w", err)
	}
	t.col = map[string]int{}
	for i, h := range rows[0] {
		t.col[h] = i
	}
	// Only the keys are read here; a chemical's other columns are parsed the
	// first time it is asked for (chem): parsing all 18,000 rows with their
	// per-species maps would make an instance's first call about twice as slow
	// in the module.
	t.rows = rows[1:]
	t.chems = make([]*chemical, len(t.rows))
	t.byKey = make(map[string]int, 3*len(t.rows))
	for idx, r := range t.rows {
		for _, k := range []string{normName(t.get(r, "Compound")), strings.ToLower(t.get(r, "CAS")), strings.ToLower(t.get(r, "DTXSID"))} {
			if k == "" {
				continue
			}
			if _, dup := t.byKey[k]; !dup {
				t.byKey[k] = idx
			}
		}
	}
	return nil
}

// get returns the named column of a chemical row ("" when absent).
func (t *tables) get(r []string, name string) string {
	if i, ok := t.col[name]; ok && i < len(r) {
		return r[i]
	}
	return ""
}

// chem returns chemical i, parsing its row the first time.
func (t *tables) chem(i int) *chemical {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.chems[i]; c != nil {
		return c
	}
	r, get := t.rows[i], t.get
	c := &chemical{
		Name: get(r, "Compound"), CAS: get(r, "CAS"), DTXSID: get(r, "DTXSID"),
		pKaDonor: get(r, "pKa_Donor"), pKaAccept: get(r, "pKa_Accept"),
		caco2: get(r, "Human.Caco2.Pab"),
	}
	c.MW, c.hasMW = parseNum(get(r, "MW"))
	c.logP, c.hasLogP = parseNum(get(r, "logP"))
	c.logMA, c.hasLogMA = parseNum(get(r, "logMA"))
	c.clint = map[string]string{"Human": get(r, "Human.Clint"), "Rat": get(r, "Rat.Clint")}
	c.clintP = map[string]string{"Human": get(r, "Human.Clint.pValue"), "Rat": get(r, "Rat.Clint.pValue")}
	c.fup = map[string]string{"Human": get(r, "Human.Funbound.plasma"), "Rat": get(r, "Rat.Funbound.plasma"),
		"Mouse": get(r, "Mouse.Funbound.plasma"), "Rabbit": get(r, "Rabbit.Funbound.plasma")}
	c.rb2p = map[string]string{"Human": get(r, "Human.Rblood2plasma"), "Rat": get(r, "Rat.Rblood2plasma")}
	c.fabs = get(r, "Human.Fabs")
	c.fgut = get(r, "Human.Fgut")
	c.fhep = get(r, "Human.Fhep")
	c.foral = map[string]string{"Human": get(r, "Human.Foral"), "Rat": get(r, "Rat.Foral"),
		"Mouse": get(r, "Mouse.Foral"), "Dog": get(r, "Dog.Foral")}
	t.chems[i] = c
	return c
}

// normName lower-cases s and keeps only letters and digits, so that
// "Bisphenol A", "bisphenol-a" and "BisphenolA" compare equal.
func normName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}
