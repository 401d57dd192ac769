package jobs

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"toxgate/gateway/modulehost/modelapi"
)

// mapping turns a table row into a model input. A batch route (a list of
// SMILES) takes one column as its list member, many rows per call; any
// other route takes one row per call, each input property from the column
// of the same name (ignoring case), typed by the route's schema.
type mapping struct {
	ref      modelapi.ModelRef
	batch    bool
	column   string            // the column of a batch route
	props    map[string]string // property → JSON type, other routes
	required []string
	cols     map[string]int // property → column index, after check
	colIdx   int
}

func newMapping(ref modelapi.ModelRef, column string) (*mapping, error) {
	m := &mapping{ref: ref, batch: ref.Batch != nil}
	if m.batch {
		m.column = column
		if m.column == "" {
			m.column = ref.Batch.Input
		}
		return m, nil
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(ref.InputSchema, &s); err != nil || len(s.Properties) == 0 {
		return nil, errorf(http.StatusUnprocessableEntity, "invalid_input", "model", "model route %s has no input properties a table's columns can fill", ref.Route)
	}
	m.props = map[string]string{}
	for name, p := range s.Properties {
		t, _ := p.Type.(string)
		m.props[name] = t
	}
	m.required = s.Required
	if column != "" {
		m.column = column
	}
	return m, nil
}

// check matches the mapping to the table's header.
func (m *mapping) check(header []string) error {
	if m.batch {
		if m.colIdx = column(header, m.column); m.colIdx < 0 {
			return errorf(http.StatusUnprocessableEntity, "invalid_input", "smiles_column", "the table has no column %q; its columns are %s", m.column, strings.Join(header, ", "))
		}
		m.column = header[m.colIdx]
		return nil
	}
	m.cols = map[string]int{}
	for p := range m.props {
		name := p
		if p == "smiles" && m.column != "" {
			name = m.column
		}
		if i := column(header, name); i >= 0 {
			m.cols[p] = i
		}
	}
	var missing []string
	for _, p := range m.required {
		if _, ok := m.cols[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return errorf(http.StatusUnprocessableEntity, "invalid_input", "resource_id", "model route %s needs the columns %s; the table has %s", m.ref.Route, strings.Join(missing, ", "), strings.Join(header, ", "))
	}
	if len(m.cols) == 0 {
		return errorf(http.StatusUnprocessableEntity, "invalid_input", "resource_id", "no column of the table is an input of model route %s", m.ref.Route)
	}
	return nil
}

// cell is a row's value at column i ("" beyond its end).
func cell(row []string, i int) string {
	if i < len(row) {
		return strings.TrimSpace(row[i])
	}
	return ""
}

// rowInput is the input object of one row of a non-batch route.
func (m *mapping) rowInput(row []string) ([]byte, error) {
	in := map[string]any{}
	for p, i := range m.cols {
		v := cell(row, i)
		if v == "" {
			continue
		}
		switch m.props[p] {
		case "number", "integer":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, errors.New("column for " + p + ": " + strconv.Quote(v) + " is not a number")
			}
			in[p] = f
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, errors.New("column for " + p + ": " + strconv.Quote(v) + " is not true or false")
			}
			in[p] = b
		default:
			in[p] = v
		}
	}
	return json.Marshal(in)
}

// batchInput is the input of a batch call on items.
func (m *mapping) batchInput(items []string) []byte {
	b, _ := json.Marshal(map[string][]string{m.ref.Batch.Input: items})
	return b
}

// batchOutput reads the list of per-item answers of a batch call.
func (m *mapping) batchOutput(out []byte) ([]json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(out, &o); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(o[m.ref.Batch.Output], &items); err != nil {
		return nil, errors.New("the answer has no list " + m.ref.Batch.Output)
	}
	return items, nil
}

// rowError is the answer recorded for a row the model refused.
func rowError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}
