// Package metabolomics computes the intracellular metabolite responses of rat
// cardiomyocytes to doxorubicin from the Metabolon-type data of Dougherty et
// al. (2024, PLoS Comput Biol 20:e1011919, CC0): DOX against its vehicle
// (DMSO2) at 6 and 24 h, per metabolite log2 fold change, Welch's t-test and
// Benjamini–Hochberg q-values, grouped by super- and sub-pathway.
package metabolomics

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"toxgate/sdk/stats"
)

//go:embed dougherty2024_metabolomics_raw.csv.gz
var rawGz []byte

// Times are the sampled time points, h.
var Times = []int{6, 24}

// Metabolite is one biochemical with its test results per time point.
type Metabolite struct {
	Name         string   `json:"biochemical"`
	SuperPathway string   `json:"super_pathway"`
	SubPathway   string   `json:"sub_pathway"`
	KEGG         string   `json:"kegg,omitempty"`
	HMDB         string   `json:"hmdb,omitempty"`
	PubChem      string   `json:"pubchem,omitempty"`
	Results      []Result `json:"results"`
}

// Result is DOX against vehicle at one time.
type Result struct {
	TimeH    int       `json:"time_h"`
	Log2FC   stats.Num `json:"log2fc"`
	P        stats.Num `json:"p"`
	Q        stats.Num `json:"q"`
	NDOX     int       `json:"n_dox_detected"`
	NVehicle int       `json:"n_vehicle_detected"`
}

var (
	once sync.Once
	mets []Metabolite
	mErr error
)

// All returns every metabolite with its results (computed once).
func All() ([]Metabolite, error) {
	once.Do(func() { mets, mErr = build() })
	return mets, mErr
}

func build() ([]Metabolite, error) {
	zr, err := gzip.NewReader(bytes.NewReader(rawGz))
	if err != nil {
		return nil, fmt.Errorf("opening the metabolomics table: %w", err)
	}
	r := csv.NewReader(zr)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading the metabolomics table: %w", err)
	}
	hdr := -1
	for i, row := range rows {
		if len(row) > 1 && row[1] == "BIOCHEMICAL" {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		return nil, fmt.Errorf("metabolomics table has no BIOCHEMICAL header")
	}
	h := rows[hdr]
	idx := func(name string) int {
		for i, c := range h {
			if strings.TrimSpace(c) == name {
				return i
			}
		}
		return -1
	}
	iSup, iSub, iKegg, iPub, iHmdb := idx("SUPER_PATHWAY"), idx("SUB_PATHWAY"), idx("KEGG"), idx("PUBCHEM"), idx("Group HMDB")
	groups := map[string][]int{}
	for j, c := range h {
		groups[c] = append(groups[c], j)
	}
	var out []Metabolite
	var ps [][]float64 = make([][]float64, len(Times))
	for _, row := range rows[hdr+1:] {
		if len(row) < len(h) || row[1] == "" {
			continue
		}
		sup := row[iSup]
		if sup == "" {
			sup = "Unnamed (Metabolon X- compound)"
		}
		m := Metabolite{Name: row[1], SuperPathway: sup, SubPathway: row[iSub], KEGG: row[iKegg], PubChem: row[iPub], HMDB: row[iHmdb]}
		// Metabolon convention: a value below detection is imputed with the
		// metabolite's minimum observed intensity.
		minv := math.Inf(1)
		for j := 13; j < len(h); j++ {
			if v, err := strconv.ParseFloat(row[j], 64); err == nil && v > 0 {
				minv = math.Min(minv, v)
			}
		}
		for k, t := range Times {
			dox, nd := logs(row, groups[fmt.Sprintf("DOX_%dh", t)], minv)
			veh, nv := logs(row, groups[fmt.Sprintf("DMSO2_%dh", t)], minv)
			res := Result{TimeH: t, NDOX: nd, NVehicle: nv, Log2FC: stats.Num(math.NaN()), P: stats.Num(math.NaN())}
			if tt, err := stats.Welch(dox, veh); err == nil && nd+nv > 0 {
				res.Log2FC, res.P = stats.Num(tt.Diff), stats.Num(tt.P)
			}
			m.Results = append(m.Results, res)
			ps[k] = append(ps[k], float64(res.P))
		}
		out = append(out, m)
	}
	for k := range Times {
		for i, q := range stats.BH(ps[k]) {
			out[i].Results[k].Q = stats.Num(q)
		}
	}
	return out, nil
}

// logs returns log2 intensities of the columns (imputing undetected values
// with minv) and how many were detected.
func logs(row []string, cols []int, minv float64) ([]float64, int) {
	var out []float64
	n := 0
	for _, j := range cols {
		v, err := strconv.ParseFloat(row[j], 64)
		if err != nil || v <= 0 {
			v = minv
		} else {
			n++
		}
		if !math.IsInf(v, 0) {
			out = append(out, math.Log2(v))
		}
	}
	return out, n
}

// PathwaySummary aggregates results per super-pathway and time.
type PathwaySummary struct {
	SuperPathway string  `json:"super_pathway"`
	TimeH        int     `json:"time_h"`
	N            int     `json:"n_metabolites"`
	Up           int     `json:"n_up_q05"`
	Down         int     `json:"n_down_q05"`
	MeanLog2FC   float64 `json:"mean_log2fc"`
}

// Summarise returns the pathway summary of ms, sorted by pathway and time.
func Summarise(ms []Metabolite) []PathwaySummary {
	type key struct {
		p string
		t int
	}
	acc := map[key]*PathwaySummary{}
	for _, m := range ms {
		for _, r := range m.Results {
			k := key{m.SuperPathway, r.TimeH}
			s := acc[k]
			if s == nil {
				s = &PathwaySummary{SuperPathway: m.SuperPathway, TimeH: r.TimeH}
				acc[k] = s
			}
			if math.IsNaN(float64(r.Log2FC)) {
				continue
			}
			s.N++
			s.MeanLog2FC += float64(r.Log2FC)
			if r.Q < 0.05 && r.Log2FC > 0 {
				s.Up++
			}
			if r.Q < 0.05 && r.Log2FC < 0 {
				s.Down++
			}
		}
	}
	var out []PathwaySummary
	for _, s := range acc {
		if s.N > 0 {
			s.MeanLog2FC /= float64(s.N)
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].SuperPathway != out[j].SuperPathway {
			return out[i].SuperPathway < out[j].SuperPathway
		}
		return out[i].TimeH < out[j].TimeH
	})
	return out
}

// Top is one entry of the most-changed list.
type Top struct {
	Name         string `json:"biochemical"`
	SuperPathway string `json:"super_pathway"`
	SubPathway   string `json:"sub_pathway"`
	Result
}

// MostChanged returns, per time, the n metabolites with the smallest q
// (ties by the largest |log2FC|).
func MostChanged(ms []Metabolite, n int) []Top {
	var out []Top
	for k := range Times {
		var ts []Top
		for _, m := range ms {
			if r := m.Results[k]; !math.IsNaN(float64(r.P)) {
				ts = append(ts, Top{m.Name, m.SuperPathway, m.SubPathway, r})
			}
		}
		sort.SliceStable(ts, func(i, j int) bool {
			if ts[i].Q != ts[j].Q {
				return ts[i].Q < ts[j].Q
			}
			return math.Abs(float64(ts[i].Log2FC)) > math.Abs(float64(ts[j].Log2FC))
		})
		out = append(out, ts[:min(n, len(ts))]...)
	}
	return out
}
