package modulehost

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"

	"toxgate/gateway/internal/csvcell"
	"toxgate/gateway/modulehost/modelapi"
	"toxgate/sdk/abi"
)

// tableCSV renders the table member of a JSON output as CSV (RFC 4180, header row).
func tableCSV(output []byte, t *abi.Table) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(output, &top); err != nil {
		return nil, fmt.Errorf("output is not an object: %w", err)
	}
	raw, ok := top[t.Field]
	if !ok {
		return nil, fmt.Errorf("output has no member %q", t.Field)
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("output member %q is not an array: %w", t.Field, err)
	}
	cols := t.Columns
	if len(cols) == 0 && len(rows) > 0 {
		var err error
		if cols, err = orderedKeys(rows[0]); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(cols)
	rec := make([]string, len(cols))
	for i, r := range rows {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(r, &row); err != nil {
			return nil, fmt.Errorf("row %d is not an object: %w", i, err)
		}
		for j, c := range cols {
			rec[j] = csvcell.Raw(row[c])
			if c == "error" {
				rec[j] = errorCell(row[c])
			}
		}
		w.Write(rec)
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// errorCell renders a row's error: an object's "field: message", else as cell.
func errorCell(v json.RawMessage) string {
	var e struct {
		Message *string `json:"message"`
		Field   string  `json:"field"`
	}
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &e) != nil || e.Message == nil {
		return csvcell.Raw(v)
	}
	if e.Field != "" && !strings.Contains(*e.Message, e.Field) {
		return e.Field + ": " + *e.Message
	}
	return *e.Message
}

// orderedKeys returns the member names of a JSON object in document order.
func orderedKeys(obj json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(string(obj)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("table row is not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// wantsCSV reports whether an Accept header prefers text/csv to JSON.
func wantsCSV(accept string) bool {
	if accept == "" {
		return false
	}
	qCSV, qJSON := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
				fmt.Sscanf(v, "%g", &q)
			}
		}
		switch mt {
		case "text/csv":
			qCSV = max(qCSV, q)
		case "application/json", "application/*", "*/*":
			qJSON = max(qJSON, q)
		}
	}
	return qCSV > 0 && qCSV >= qJSON
}

// acceptsJSON reports whether an Accept header allows application/json.
func acceptsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/json", "application/*", "*/*":
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.TrimSpace(k) == "q" {
					fmt.Sscanf(v, "%g", &q)
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// seriesCSV renders the time series of a simulation's JSON output as CSV:
// the first member named time* holding a list of numbers (at the top level
// or in a top-level object, e.g. time_series), then, in document order,
// every member of the same object holding a list of as many values, and the
// members of its objects holding such lists ("ng_per_mL.plasma"). ok is false
// when the output has no such series.
func seriesCSV(output []byte) (csvBody []byte, ok bool) {
	top, err := modelapi.ObjectMembers(output)
	if err != nil {
		return nil, false
	}
	if b, ok := seriesOf(top); ok {
		return b, true
	}
	for _, m := range top {
		if inner, err := modelapi.ObjectMembers(m.Val); err == nil {
			if b, ok := seriesOf(inner); ok {
				return b, true
			}
		}
	}
	return nil, false
}

// seriesOf lays out the series of one object's members (see seriesCSV).
func seriesOf(ms []modelapi.Member) ([]byte, bool) {
	n := -1
	var cols []string
	var data [][]json.RawMessage
	add := func(name string, v json.RawMessage) bool {
		var l []json.RawMessage
		if json.Unmarshal(v, &l) != nil || len(l) != n {
			return false
		}
		for _, x := range l {
			if x = bytes.TrimSpace(x); len(x) > 0 && (x[0] == '[' || x[0] == '{' || x[0] == '"') {
				return false
			}
		}
		cols, data = append(cols, name), append(data, l)
		return true
	}
	for _, m := range ms {
		if !strings.HasPrefix(strings.ToLower(m.Key), "time") {
			continue
		}
		var l []json.RawMessage
		if json.Unmarshal(m.Val, &l) == nil && len(l) > 0 {
			n = len(l)
			if add(m.Key, m.Val) {
				break
			}
			n = -1
		}
	}
	if n < 0 {
		return nil, false
	}
	for _, m := range ms {
		if m.Key == cols[0] || add(m.Key, m.Val) {
			continue
		}
		if inner, err := modelapi.ObjectMembers(m.Val); err == nil {
			for _, im := range inner {
				add(m.Key+"."+im.Key, im.Val)
			}
		}
	}
	if len(cols) < 2 {
		return nil, false
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(cols)
	rec := make([]string, len(cols))
	for i := 0; i < n; i++ {
		for j := range cols {
			rec[j] = csvcell.Raw(data[j][i])
		}
		w.Write(rec)
	}
	w.Flush()
	return buf.Bytes(), w.Error() == nil
}
