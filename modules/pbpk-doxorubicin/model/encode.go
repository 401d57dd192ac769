package model

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"toxgate/sdk/jsonw"
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
	units, err := json.Marshal(o.Units)
	if err != nil {
		return b, err
	}
	b = slices.Grow(b, len(head)+len(units)+o.Series.sizeHint()+len(o.PlotSVG)*11/10+64)
	b = append(b, head[:len(head)-1]...) // without its closing brace
	b = append(b, `,"time_series":`...)
	b = o.Series.appendJSON(b)
	b = append(b, `,"units":`...)
	b = append(b, units...)
	b = append(b, `,"plot_svg":`...)
	b = jsonw.AppendString(b, o.PlotSVG)
	return append(b, '}'), nil
}

func (s Series) appendJSON(b []byte) []byte {
	b = append(b, `{"time_h":[`...)
	for i, t := range s.TimeH {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTime(b, t)
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

// appendTime appends t as stats.AppendJSONFloat does (shortest round-trip
// digits, as encoding/json), directly when t is the double nearest to a
// decimal with at most two decimals below 10^6 (the output times: steps of
// 0.01 h and 0.25 h); that decimal is then the shortest one that reads back
// as t, since any other decimal within t's rounding interval (< 2·10^-10
// wide) needs more digits.
func appendTime(b []byte, t float64) []byte {
	if !(t >= 0 && t < 1e6) {
		return stats.AppendJSONFloat(b, t)
	}
	n := math.Round(t * 100)
	if n/100 != t {
		return stats.AppendJSONFloat(b, t)
	}
	ip, fp := uint32(n)/100, uint32(n)%100
	var d [10]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + ip%10)
		ip /= 10
		if ip == 0 {
			break
		}
	}
	b = append(b, d[i:]...)
	switch {
	case fp == 0:
	case fp%10 == 0:
		b = append(b, '.', byte('0'+fp/10))
	default:
		b = append(b, '.', byte('0'+fp/10), byte('0'+fp%10))
	}
	return b
}
