package model

import (
	"encoding/json"
	"slices"
	"strconv"

	"toxgate/sdk/stats"
)

// SeriesDigits is the number of significant digits of the concentration time
// courses in the JSON response (the solver's relative tolerance is 1e-7, the
// parameters have 3–4 significant digits); time_h and the summary are exact.
const SeriesDigits = 6

// MarshalJSON writes the series as encoding/json would (map keys sorted),
// without reflection, the concentrations rounded to SeriesDigits digits.
func (s Series) MarshalJSON() ([]byte, error) {
	return s.appendJSON(make([]byte, 0, s.sizeHint())), nil
}

// sizeHint is about the length of the series' JSON.
func (s Series) sizeHint() int {
	return 32 + len(s.TimeH)*(10+12*(len(s.NgPerML)+len(s.UM)))
}

// AppendJSON appends o to b exactly as json.Marshal(o) writes it (a test
// checks it), without encoding/json re-validating the ~300 KB of time
// series that Series.MarshalJSON writes: the module returns it as a
// module.RawJSON.
func (o *Output) AppendJSON(b []byte) ([]byte, error) {
	head, err := json.Marshal(struct {
		Model      string      `json:"model"`
		Version    string      `json:"version"`
		Physiology *Physiology `json:"physiology"`
		Summary    Summary     `json:"summary"`
	}{o.Model, o.Version, o.Physiology, o.Summary})
	if err != nil {
		return b, err
	}
	tail, err := json.Marshal(struct {
		Units   map[string]string `json:"units"`
		PlotSVG string            `json:"plot_svg"`
	}{o.Units, o.PlotSVG})
	if err != nil {
		return b, err
	}
	b = slices.Grow(b, len(head)+len(tail)+o.Series.sizeHint()+16)
	b = append(b, head[:len(head)-1]...) // without its closing brace
	b = append(b, `,"time_series":`...)
	b = o.Series.appendJSON(b)
	b = append(b, ',')
	return append(b, tail[1:]...), nil // without its opening brace
}

func (s Series) appendJSON(b []byte) []byte {
	b = append(b, `{"time_h":[`...)
	for i, t := range s.TimeH {
		if i > 0 {
			b = append(b, ',')
		}
		b = stats.AppendJSONFloat(b, t)
	}
	b = append(b, `],"ng_per_mL":`...)
	b = appendMap(b, s.NgPerML)
	b = append(b, `,"uM":`...)
	b = appendMap(b, s.UM)
	return append(b, '}')
}

func appendMap(b []byte, m map[string][]float64) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k) // plain ASCII compartment names
		b = append(b, ':')
		b = appendSeriesFloats(b, m[k])
	}
	return append(b, '}')
}
