package model

import (
	"math"
	"sort"
	"strings"
)

// ionization holds the fractions of a chemical in each charge state at a
// given pH (httk calc_ionization: one state per pKa plus one, Henderson–
// Hasselbalch ratios between neighbouring states; Pearce et al. 2017,
// Strope et al. 2018).
type ionization struct {
	neutral, charged, negative, positive, zwitter float64
}

type pKa struct {
	v     float64
	donor bool
}

// parsePKa reads httk's pKa field ("9.78,10.4"; " " or empty: none).
func parsePKa(donor, accept string) []pKa {
	var ps []pKa
	for _, s := range []struct {
		txt   string
		donor bool
	}{{donor, true}, {accept, false}} {
		if strings.TrimSpace(s.txt) == "" {
			continue
		}
		for _, v := range splitNums(s.txt) {
			ps = append(ps, pKa{v, s.donor})
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].v < ps[j].v })
	return ps
}

func calcIonization(pH float64, ps []pKa) ionization {
	n := len(ps) + 1
	logr := make([]float64, n) // log10 ratio of state k to the lowest state
	for k := 1; k < n; k++ {
		logr[k] = logr[k-1] + pH - ps[k-1].v
	}
	maxl := logr[0]
	for _, l := range logr {
		maxl = math.Max(maxl, l)
	}
	var sum float64
	for _, l := range logr {
		sum += math.Pow(10, l-maxl)
	}
	var out ionization
	for k := 0; k < n; k++ {
		frac := math.Pow(10, logr[k]-maxl) / sum
		donated, accepted := 0, 0
		for j := 1; j < n; j++ {
			if ps[j-1].donor && j <= k {
				donated++
			}
			if !ps[j-1].donor && j > k {
				accepted++
			}
		}
		switch charge := accepted - donated; {
		case charge < 0:
			out.negative += frac
		case charge > 0:
			out.positive += frac
		case accepted == 0 && donated == 0:
			out.neutral += frac
		default:
			out.zwitter += frac
		}
	}
	out.neutral = signif4(out.neutral)
	out.negative = signif4(out.negative)
	out.positive = signif4(out.positive)
	out.charged = signif4(out.negative + out.positive)
	out.zwitter = signif4(out.zwitter)
	return out
}

// dow is the octanol:water distribution coefficient at the ionisation
// state ion: Pow·(1 + (α−1)·f_charged), α = 0.001 (Schmitt 2008).
func dow(pow float64, ion ionization) float64 {
	return signif4(pow * (1 + (alpha-1)*ion.charged))
}

const alpha = 0.001

// signif4 rounds to 4 significant figures and 9 decimals, as httk's
// set_httk_precision does to every reported parameter.
func signif4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Floor(math.Log10(math.Abs(x)))
	p := math.Pow(10, 3-e)
	r := math.Round(x*p) / p
	return math.Round(r*1e9) / 1e9
}
