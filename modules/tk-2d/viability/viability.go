// Package viability fits and serves the concentration–viability relations of
// human iPSC-derived cardiomyocytes after 48 h exposure, from the data of
// Matthews et al. (2023): PrestoBlue viability of cells from six donors,
// galactose medium, 0.01–50 µM, as a fraction of vehicle.
package viability

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"

	"toxgate/sdk/stats"
)

//go:embed matthews2023_drc48h.csv
var drcCSV []byte

//go:embed avgLD50_48h_uM.csv
var ld50CSV []byte

// Drugs maps the data's drug codes to CAS numbers of httk's table.
var Drugs = map[string]string{
	"Doxo": "23214-92-8", // doxorubicin
	"Daun": "20830-81-3", // daunorubicin
	"Epi":  "56420-45-2", // epirubicin
	"Mito": "65271-80-9", // mitoxantrone
}

// Fit is the pooled 48-h Hill fit of one drug on the nominal concentration.
type Fit struct {
	Drug      string     `json:"drug"`
	Hill      stats.Hill `json:"hill"`
	DonorLD50 []float64  `json:"donor_ld50_uM"` // the authors' per-donor LL.4 LD50s, µM
	Conc      []float64  `json:"-"`             // data, µM
	Viability []float64  `json:"-"`             // data, fraction of vehicle
}

var (
	once sync.Once
	fits map[string]*Fit
	err  error
)

// ForCAS returns the fit for the drug with that CAS number, or nil when
// Matthews et al. did not test it.
func ForCAS(cas string) (*Fit, error) {
	once.Do(func() { fits, err = build() })
	if err != nil {
		return nil, err
	}
	for code, c := range Drugs {
		if c == cas {
			return fits[code], nil
		}
	}
	return nil, nil
}

func build() (map[string]*Fit, error) {
	recs, err := csv.NewReader(bytes.NewReader(drcCSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading Matthews 48-h data: %w", err)
	}
	out := map[string]*Fit{}
	for _, r := range recs[1:] {
		c, e1 := strconv.ParseFloat(r[2], 64)
		v, e2 := strconv.ParseFloat(r[3], 64)
		if e1 != nil || e2 != nil {
			return nil, fmt.Errorf("bad row %v", r)
		}
		f := out[r[0]]
		if f == nil {
			f = &Fit{Drug: r[0]}
			out[r[0]] = f
		}
		f.Conc = append(f.Conc, c)
		f.Viability = append(f.Viability, v)
	}
	lds, err := csv.NewReader(bytes.NewReader(ld50CSV)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading Matthews LD50s: %w", err)
	}
	for _, r := range lds[1:] {
		if f := out[r[0]]; f != nil {
			v, err := strconv.ParseFloat(r[2], 64)
			if err != nil {
				return nil, fmt.Errorf("bad LD50 row %v", r)
			}
			f.DonorLD50 = append(f.DonorLD50, v)
		}
	}
	for code, f := range out {
		sort.Float64s(f.DonorLD50)
		h, err := stats.FitHill(f.Conc, f.Viability, 2)
		if err != nil {
			return nil, fmt.Errorf("Hill fit of %s: %w", code, err)
		}
		f.Hill = h
	}
	return out, nil
}

// Range returns the smallest and largest per-donor LD50, µM.
func (f *Fit) Range() (lo, hi float64) {
	if len(f.DonorLD50) == 0 {
		return math.NaN(), math.NaN()
	}
	return f.DonorLD50[0], f.DonorLD50[len(f.DonorLD50)-1]
}
