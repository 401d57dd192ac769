package invitro

import (
	"fmt"
	"math"
)

// Well is a multiwell-plate well geometry with httk's default working volume
// and cell number (httk well_param table; Corning product data).
type Well struct {
	Format     int     `json:"well_number"`     // wells per plate
	Desc       string  `json:"well_desc"`       // httk well_desc
	DiamMM     float64 `json:"diameter_mm"`     // inner diameter (side for square wells), mm
	VTotalUL   float64 `json:"v_total_uL"`      // total well volume, µL
	VWorkingUL float64 `json:"v_working_uL"`    // default medium volume, µL
	CellYield  float64 `json:"cell_yield"`      // default cells per well
	Square     bool    `json:"square"`          // square well (httk sysID 7 and 9)
	BottomMM2  float64 `json:"area_bottom_mm2"` // bottom area, mm²
}

// wellParam is httk 2.7 well_param restricted, as armitage_estimate_sarea does,
// to formats 6–48 and the descriptions flat_bottom, standard and clear_flat_bottom.
var wellParam = []Well{
	{6, "", 34.8, 16800, 2400, 950000, false, 950},
	{12, "", 22.1, 6900, 950, 380000, false, 380},
	{24, "", 15.6, 3400, 475, 190000, false, 190},
	{48, "", 11, 1600, 240, 95000, false, 95},
	{96, "flat_bottom", 6.4, 360, 150, 32000, false, 32},
	{384, "standard", 2.7, 112, 40, 5600, true, 5.6},
	{1536, "clear_flat_bottom", 1.63, 12.5, 5, 2500, true, 2.5},
}

// Formats lists the supported plate formats.
func Formats() []int {
	out := make([]int, len(wellParam))
	for i, w := range wellParam {
		out[i] = w.Format
	}
	return out
}

// WellFor returns httk's default well for a plate format.
func WellFor(format int) (Well, error) {
	for _, w := range wellParam {
		if w.Format == format {
			return w, nil
		}
	}
	return Well{}, fmt.Errorf("plate format %d not supported; supported: %v", format, Formats())
}

// PlasticArea is httk's armitage_estimate_sarea: the plastic area wetted by a
// working volume vWorkingUL (walls up to the medium height plus the bottom), m².
func (w Well) PlasticArea(vWorkingUL float64) float64 {
	var mm2 float64
	if w.Square {
		h := vWorkingUL / (w.DiamMM * w.DiamMM)
		mm2 = 4*w.DiamMM*h + w.DiamMM*w.DiamMM
	} else {
		r := w.DiamMM / 2
		h := vWorkingUL / (math.Pi * r * r)
		mm2 = 2*math.Pi*r*h + math.Pi*r*r
	}
	return mm2 / 1e6
}

// MediumHeightMM is the height of the medium column, mm.
func (w Well) MediumHeightMM(vWorkingUL float64) float64 {
	if w.Square {
		return vWorkingUL / (w.DiamMM * w.DiamMM)
	}
	r := w.DiamMM / 2
	return vWorkingUL / (math.Pi * r * r)
}
