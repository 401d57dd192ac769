// Package proteomics computes time-resolved protein responses of human iPSC
// cardiac microtissues to anthracyclines from the HeCaToS proteomics table
// (log2 median-normalised intensities; Nguyen et al. 2021, Selevsek et al.
// 2020): for each drug, dose level and time point, the log2 fold change
// against the time-matched vehicle (Fluct DMSO), Welch's t-test p-value and
// the Benjamini–Hochberg q-value over all protein groups tested at that drug,
// dose and time.
package proteomics

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"toxgate/sdk/textmatch"

	"toxgate/sdk/stats"
)

//go:embed hecatos_cardio_px_log2.txt.gz
var tableGz []byte

// Drugs are the anthracyclines of the data set, by code.
var Drugs = map[string]string{"DOX": "doxorubicin", "EPI": "epirubicin", "IDA": "idarubicin", "DAU": "daunorubicin"}

// Doses are the HeCaToS dose levels.
var Doses = []string{"Therapeutic", "Toxic"}

// Times are the treated time points, h.
var Times = []int{2, 8, 24, 72, 168, 240, 336}

// Group is one protein group of the table.
type Group struct {
	ID         string   `json:"group"`
	Accessions []string `json:"accessions"`
	Entries    []string `json:"entry_names"`
	// Others are further, less completely quantified groups with the accession.
	Others []string `json:"other_groups,omitempty"`
}

// Result is one comparison of a protein group.
type Result struct {
	Dose      string    `json:"dose"`
	TimeH     int       `json:"time_h"`
	Log2FC    stats.Num `json:"log2fc"`
	P         stats.Num `json:"p"`
	Q         stats.Num `json:"q"`
	NTreated  int       `json:"n_treated"`
	NVehicle  int       `json:"n_vehicle"`
	Available bool      `json:"tested"`
}

type data struct {
	groups []Group
	values [][]float64 // [group][column]
	cols   map[string][]int
	byAcc  map[string]int
	// detected counts the non-missing values of each group.
	detected []int
}

func countFinite(row []float64) int {
	n := 0
	for _, v := range row {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

var (
	once   sync.Once
	tab    *data
	tabErr error
	qmu    sync.Mutex
	qcache = map[string][]Result{} // key drug/dose/time → per group
)

func load() (*data, error) {
	once.Do(func() { tab, tabErr = parse() })
	return tab, tabErr
}

func parse() (*data, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tableGz))
	if err != nil {
		return nil, fmt.Errorf("opening the HeCaToS table: %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	if !sc.Scan() {
		return nil, fmt.Errorf("HeCaToS table is empty")
	}
	header := strings.Split(sc.Text(), "\t")
	d := &data{cols: map[string][]int{}, byAcc: map[string]int{}}
	seen := map[string]bool{}
	for j, h := range header[1:] {
		if seen[h] { // the three DOX_Therapeutic_T8 columns appear twice
			continue
		}
		seen[h] = true
		k := strings.LastIndex(h, "_")
		if k < 0 {
			continue
		}
		d.cols[h[:k]] = append(d.cols[h[:k]], j)
	}
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		g := Group{ID: f[0]}
		for _, part := range strings.Split(f[0], " : ") {
			p := strings.Split(strings.TrimSpace(part), "|")
			if len(p) == 3 {
				g.Accessions = append(g.Accessions, p[1])
				g.Entries = append(g.Entries, p[2])
			}
		}
		row := make([]float64, len(f)-1)
		for j, s := range f[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				v = math.NaN()
			}
			row[j] = v
		}
		d.groups = append(d.groups, g)
		d.values = append(d.values, row)
		// An accession maps to the best-quantified group holding it (most
		// detected values); the other groups are listed with it.
		n := len(d.groups) - 1
		d.detected = append(d.detected, countFinite(row))
		for _, a := range append(append([]string{}, g.Accessions...), g.Entries...) {
			i, ok := d.byAcc[a]
			switch {
			case !ok:
				d.byAcc[a] = n
			case d.detected[n] > d.detected[i]:
				d.groups[n].Others = append(d.groups[n].Others, d.groups[i].ID)
				d.byAcc[a] = n
			default:
				d.groups[i].Others = append(d.groups[i].Others, g.ID)
			}
		}
	}
	return d, sc.Err()
}

func finite(row []float64, idx []int) []float64 {
	var out []float64
	for _, j := range idx {
		if !math.IsNaN(row[j]) {
			out = append(out, row[j])
		}
	}
	return out
}

// compare tests every group for one drug, dose and time (cached).
func (d *data) compare(drug, dose string, t int) []Result {
	key := fmt.Sprintf("%s/%s/%d", drug, dose, t)
	qmu.Lock()
	defer qmu.Unlock()
	if r, ok := qcache[key]; ok {
		return r
	}
	tr := d.cols[fmt.Sprintf("%s_%s_T%d", drug, dose, t)]
	veh := d.cols[fmt.Sprintf("Fluct DMSO_T%d", t)]
	res := make([]Result, len(d.groups))
	p := make([]float64, len(d.groups))
	for i, row := range d.values {
		a, b := finite(row, tr), finite(row, veh)
		res[i] = Result{Dose: dose, TimeH: t, NTreated: len(a), NVehicle: len(b), Log2FC: stats.Num(math.NaN()), P: stats.Num(math.NaN()), Q: stats.Num(math.NaN())}
		p[i] = math.NaN()
		if tt, err := stats.Welch(a, b); err == nil {
			res[i].Log2FC, res[i].P, res[i].Available = stats.Num(tt.Diff), stats.Num(tt.P), true
			p[i] = tt.P
		} else if len(a) > 0 && len(b) > 0 {
			ma, _ := stats.MeanVar(a)
			mb, _ := stats.MeanVar(b)
			res[i].Log2FC = stats.Num(ma - mb)
		}
	}
	for i, q := range stats.BH(p) {
		res[i].Q = stats.Num(q)
	}
	qcache[key] = res
	return res
}

// NotFoundError reports an accession absent from the data with close matches.
type NotFoundError struct {
	Query   string
	Closest []string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("protein %q is not among the %s protein groups of the HeCaToS cardiac microtissue proteomics; closest accessions: %s",
		e.Query, "2 497", strings.Join(e.Closest, ", "))
}

// Find returns the protein group holding a UniProt accession or entry name.
func Find(q string) (Group, error) {
	d, err := load()
	if err != nil {
		return Group{}, err
	}
	key := strings.ToUpper(strings.TrimSpace(q))
	if i := strings.Index(key, "-"); i > 0 { // isoform suffix: P16403-2
		if _, ok := d.byAcc[key]; !ok {
			key = key[:i]
		}
	}
	if i, ok := d.byAcc[key]; ok {
		return d.groups[i], nil
	}
	type c struct {
		a string
		n int
	}
	var cs []c
	for a := range d.byAcc {
		cs = append(cs, c{a, textmatch.Levenshtein(key, a)})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].n != cs[j].n {
			return cs[i].n < cs[j].n
		}
		return cs[i].a < cs[j].a
	})
	var out []string
	for _, x := range cs[:min(5, len(cs))] {
		out = append(out, x.a)
	}
	return Group{}, &NotFoundError{q, out}
}

// Series returns the comparisons of the group for a drug over doses and times.
func Series(drug string, g Group) ([]Result, error) {
	d, err := load()
	if err != nil {
		return nil, err
	}
	idx := -1
	for i := range d.groups {
		if d.groups[i].ID == g.ID {
			idx = i
			break
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("group %q not in the table", g.ID)
	}
	var out []Result
	for _, dose := range Doses {
		for _, t := range Times {
			if len(d.cols[fmt.Sprintf("%s_%s_T%d", drug, dose, t)]) == 0 {
				continue // e.g. IDA toxic has no 240/336 h samples
			}
			out = append(out, d.compare(drug, dose, t)[idx])
		}
	}
	return out, nil
}
