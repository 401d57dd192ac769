package invitro

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Ionization holds the fractions of a chemical in each charge state at one pH,
// computed as httk 2.7 calc_ionization does: one species per pKa plus one,
// Henderson–Hasselbalch ratios between neighbouring species (ordered by pKa),
// each fraction rounded to 4 significant figures (httk set_httk_precision).
type Ionization struct {
	Neutral  float64 `json:"neutral"`
	Positive float64 `json:"positive"`
	Negative float64 `json:"negative"`
	Zwitter  float64 `json:"zwitter"`
}

// Charged is the fraction carrying a net charge.
func (f Ionization) Charged() float64 { return f.Positive + f.Negative }

// PKa is one acid dissociation constant; Donor is true for an H-donating group.
type PKa struct {
	Value float64
	Donor bool
}

// ParsePKa reads httk's pKa_Donor and pKa_Accept fields ("8,9.93"; empty, " " or
// "NA" means none).
func ParsePKa(donor, accept string) []PKa {
	var ps []PKa
	add := func(s string, d bool) {
		for _, f := range strings.Split(s, ",") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(f), 64); err == nil {
				ps = append(ps, PKa{v, d})
			}
		}
	}
	add(donor, true)
	add(accept, false)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Value < ps[j].Value })
	return ps
}

// Ionize returns the charge-state fractions at pH for the given pKa's.
func Ionize(pH float64, pkas []PKa) Ionization {
	n := len(pkas) + 1
	logRatio := make([]float64, n) // log10 of species k relative to the lowest
	maxL := 0.0
	for k := 1; k < n; k++ {
		logRatio[k] = logRatio[k-1] + pH - pkas[k-1].Value
		maxL = math.Max(maxL, logRatio[k])
	}
	var sum float64
	for _, l := range logRatio {
		sum += math.Pow(10, l-maxL)
	}
	var out Ionization
	for k := 0; k < n; k++ {
		frac := math.Pow(10, logRatio[k]-maxL) / sum
		donated, accepted := 0, 0
		for j, p := range pkas { // species k has passed equilibria 1..k
			if p.Donor && j < k {
				donated++
			}
			if !p.Donor && j >= k {
				accepted++
			}
		}
		switch charge := accepted - donated; {
		case charge > 0:
			out.Positive += frac
		case charge < 0:
			out.Negative += frac
		case accepted == 0 && donated == 0:
			out.Neutral += frac
		default:
			out.Zwitter += frac
		}
	}
	out.Neutral, out.Positive = signif4(out.Neutral), signif4(out.Positive)
	out.Negative, out.Zwitter = signif4(out.Negative), signif4(out.Zwitter)
	return out
}

// signif4 rounds to 4 significant figures as httk's set_httk_precision.
func signif4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}
