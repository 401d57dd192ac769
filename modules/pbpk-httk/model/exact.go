package model

import (
	"encoding/json"
	"math"
	"slices"

	"toxgate/sdk/stats"
)

// The pbtk system is linear with constant coefficients between doses, so it
// is solved exactly: from one output or dosing time to the next the state is
// multiplied by the matrix exponential exp(M·Δt), computed once per distinct
// Δt (the output grid is uniform, so a run needs a handful). This replaces
// the RODAS4 integration of version 1.0 (relative tolerance 1e-5): the
// results agree with it to within its tolerance and are closer to httk's
// deSolve run (rtol 1e-8); a 365-day run costs ~35 000 11×11 matrix–vector
// products instead of ~8 000 implicit steps.

// expm returns exp(a·dt) for the n×n row-major matrix a, by scaling and
// squaring with a Taylor series (the scaled matrix has 1-norm ≤ 1/2, so the
// series is summed to rounding error in at most ~20 terms).
func expm(a []float64, n int, dt float64) []float64 {
	b := make([]float64, n*n)
	var norm float64
	for j := 0; j < n; j++ {
		var c float64
		for i := 0; i < n; i++ {
			c += math.Abs(a[i*n+j] * dt)
		}
		norm = math.Max(norm, c)
	}
	sq := 0
	for norm > 0.5 {
		norm /= 2
		sq++
	}
	f := dt / math.Pow(2, float64(sq))
	for i := range b {
		b[i] = a[i] * f
	}
	e := make([]float64, n*n)
	term := make([]float64, n*n)
	tmp := make([]float64, n*n)
	for i := 0; i < n; i++ {
		e[i*n+i], term[i*n+i] = 1, 1
	}
	for k := 1; k <= 40; k++ {
		matmul(tmp, term, b, n)
		var big float64
		for i := range term {
			term[i] = tmp[i] / float64(k)
			e[i] += term[i]
			big = math.Max(big, math.Abs(term[i]))
		}
		if big < 1e-18 {
			break
		}
	}
	for range sq {
		matmul(tmp, e, e, n)
		e, tmp = tmp, e
	}
	return e
}

// matmul sets dst = x·y (n×n, row-major).
func matmul(dst, x, y []float64, n int) {
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += x[i*n+k] * y[k*n+j]
			}
			dst[i*n+j] = s
		}
	}
}

// propagator advances the state of a system exactly, caching exp(M·Δt).
type propagator struct {
	s       *system
	cache   map[int64]*stepMat
	last    *stepMat // the matrix of the previous call, and its key
	lastKey int64
	tmp     [nStates]float64
}

// stepMat is the matrix exponential of one step, as rows for rowDot: in a
// wasm module an unrolled row of 11 products costs less than a loop over its
// ~7 non-zeros (the gut lumen row and the columns of the accumulating states
// Atubules, Ametabolized and AUC are zero off the diagonal), and it sums the
// same terms in the same order (adding a zero term changes no bit of a
// non-zero sum; outputs were checked byte for byte against the sparse loop).
type stepMat [nStates][nStates]float64

func newStepMat(e []float64) *stepMat {
	m := new(stepMat)
	for i := range m {
		copy(m[i][:], e[i*nStates:(i+1)*nStates])
	}
	return m
}

// rowDot is r·y written out for nStates = 11 (a compile-time check below
// keeps the two in step), summed left to right as the sparse loop sums.
func rowDot(r, y *[nStates]float64) float64 {
	return r[0]*y[0] + r[1]*y[1] + r[2]*y[2] + r[3]*y[3] + r[4]*y[4] + r[5]*y[5] +
		r[6]*y[6] + r[7]*y[7] + r[8]*y[8] + r[9]*y[9] + r[10]*y[10]
}

// rowDot's terms are the states: nStates must be 11.
var _ = [1]struct{}{}[nStates-11]

func newPropagator(s *system) *propagator {
	return &propagator{s: s, cache: map[int64]*stepMat{}}
}

// advance replaces y by the state dt later (no dose in between).
func (p *propagator) advance(y []float64, dt float64) {
	if dt <= 0 {
		return
	}
	key := int64(math.Round(dt * 1e12)) // Δt equal to 1e-12 day share a matrix
	e, ok := p.last, p.lastKey == key && p.last != nil
	if !ok {
		e, ok = p.cache[key]
	}
	if !ok {
		e = newStepMat(expm(p.s.a[:], nStates, dt))
		if len(p.cache) < 256 {
			p.cache[key] = e
		}
	}
	p.last, p.lastKey = e, key
	yy := (*[nStates]float64)(y[:nStates])
	for i := range p.tmp {
		p.tmp[i] = rowDot(&e[i], yy)
	}
	*yy = p.tmp
}

// MarshalJSON writes the columns in their declared order: time as
// encoding/json would (shortest exact form), the other columns rounded to
// SeriesDigits significant digits.
func (ts TimeSeries) MarshalJSON() ([]byte, error) {
	return ts.appendJSON(make([]byte, 0, ts.sizeHint())), nil
}

// sizeHint is about the length of the series' JSON.
func (ts TimeSeries) sizeHint() int { return 16 + len(ts.Time)*(12+11*13) }

// AppendJSON appends o to b exactly as json.Marshal(o) writes it (a test
// checks it), without encoding/json re-validating the time series that
// TimeSeries.MarshalJSON writes: the module returns it as a module.RawJSON.
func (o *Output) AppendJSON(b []byte) ([]byte, error) {
	head, err := json.Marshal(struct {
		Model      string            `json:"model"`
		Version    string            `json:"version"`
		Chemical   Chemical          `json:"chemical"`
		Species    string            `json:"species"`
		Dosing     Dosing            `json:"dosing"`
		Parameters *Params           `json:"parameters"`
		Summary    Summary           `json:"summary"`
		Units      map[string]string `json:"units"`
	}{o.Model, o.Version, o.Chemical, o.Species, o.Dosing, o.Parameters, o.Summary, o.Units})
	if err != nil {
		return b, err
	}
	tail, err := json.Marshal(struct {
		PlotSVG string   `json:"plot_svg"`
		Notes   []string `json:"notes,omitempty"`
	}{o.PlotSVG, o.Notes})
	if err != nil {
		return b, err
	}
	b = slices.Grow(b, len(head)+len(tail)+o.TimeSeries.sizeHint()+16)
	b = append(b, head[:len(head)-1]...) // without its closing brace
	b = append(b, `,"time_series":`...)
	b = o.TimeSeries.appendJSON(b)
	b = append(b, ',')
	return append(b, tail[1:]...), nil // without its opening brace
}

func (ts TimeSeries) appendJSON(b []byte) []byte {
	cols := []struct {
		name string
		v    []float64
	}{{"Agutlumen", ts.Agutlumen}, {"Cgut", ts.Cgut}, {"Cliver", ts.Cliver}, {"Cven", ts.Cven},
		{"Clung", ts.Clung}, {"Cart", ts.Cart}, {"Crest", ts.Crest}, {"Ckidney", ts.Ckidney},
		{"Cplasma", ts.Cplasma}, {"Aplasma", ts.Aplasma}, {"Atubules", ts.Atubules},
		{"Ametabolized", ts.Ametabolized}, {"AUC", ts.AUC}}
	b = append(b, `{"time":[`...)
	for i, t := range ts.Time {
		if i > 0 {
			b = append(b, ',')
		}
		b = stats.AppendJSONFloat(b, t)
	}
	b = append(b, ']')
	for _, c := range cols {
		b = append(b, ',', '"')
		b = append(b, c.name...)
		b = append(b, '"', ':')
		b = stats.AppendFloats(b, c.v, SeriesDigits)
	}
	return append(b, '}')
}
