package model

import (
	"math"

	"toxgate/sdk/invitro"
)

// ionization holds the fractions of a chemical in each charge state at a
// given pH (invitro.Ionize, httk calc_ionization) at the precision httk
// reports them for the PBTK parameters: set_httk_precision rounds each
// fraction to 4 significant figures and 9 decimals, and the charged
// fraction is the rounded sum of the rounded negative and positive ones.
type ionization struct {
	neutral, charged, negative, positive, zwitter float64
}

// calcIonization is invitro.Ionize at httk's reported precision.
func calcIonization(pH float64, ps []invitro.PKa) ionization {
	f := invitro.Ionize(pH, ps)
	out := ionization{
		neutral:  round9(f.Neutral),
		negative: round9(f.Negative),
		positive: round9(f.Positive),
		zwitter:  round9(f.Zwitter),
	}
	out.charged = signif4(out.negative + out.positive)
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
	return round9(math.Round(x*p) / p)
}

// round9 rounds to 9 decimals (the second half of set_httk_precision;
// invitro.Ionize has done the first, 4 significant figures).
func round9(x float64) float64 { return math.Round(x*1e9) / 1e9 }
