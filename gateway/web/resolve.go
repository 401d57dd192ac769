package web

import (
	"encoding/json"
	"errors"
	"strings"

	"toxgate/gateway/catalogclient"
)

// Resolved is one model input the page resolved from a name or identifier
// to a SMILES, shown beside the result and kept in its JSON.
type Resolved struct {
	Input         string            `json:"input"`
	SMILES        string            `json:"smiles"`
	MatchedBy     string            `json:"matched_by"`
	DTXSID        string            `json:"dtxsid,omitempty"`
	PreferredName string            `json:"preferred_name,omitempty"`
	CAS           string            `json:"cas,omitempty"`
	Sources       map[string]string `json:"sources,omitempty"`
}

// isStructureField reports whether a form field takes SMILES.
func isStructureField(f ModelField) bool {
	return f.Type != "number" && f.Type != "integer" && f.Type != "boolean" && strings.Contains(strings.ToLower(f.Name), "smiles")
}

// resolveStructureFields replaces, in the SMILES fields, each line that is
// a known compound name, synonym, CAS number, DTXSID or InChIKey with the
// compound's SMILES (the catalog's compound_resolve), and returns what it
// replaced. Lines it does not know go to the model as typed (a SMILES, or
// text the model refuses with its own message). A CAS number with a wrong
// check digit is refused here (the message says why).
func (w *Web) resolveStructureFields(r *req, fields []ModelField) ([]Resolved, *modelResult) {
	if w.o.Catalog == nil {
		return nil, nil
	}
	var out []Resolved
	for i := range fields {
		f := &fields[i]
		if !isStructureField(*f) || strings.TrimSpace(f.Value) == "" {
			continue
		}
		lines := strings.Split(f.Value, "\n")
		var items []any
		var at []int
		for k, l := range lines {
			if l = strings.TrimSpace(l); l != "" {
				items = append(items, l)
				at = append(at, k)
			}
		}
		var answers []*Resolved
		if err := w.call(r, "compound_resolve", map[string]any{"q": items}, &answers); err != nil {
			if msg := catalogFieldMessage(err, "q"); msg != "" {
				return nil, &modelResult{Status: 422, Error: msg, Field: f.Name}
			}
			// the resolver is unavailable: the model reads the input as typed
			return nil, nil
		}
		changed := false
		for k, a := range answers {
			if a == nil || k >= len(at) {
				continue
			}
			lines[at[k]] = a.SMILES
			out = append(out, *a)
			changed = true
		}
		if changed {
			f.Value = strings.Join(lines, "\n")
		}
	}
	return out, nil
}

// catalogFieldMessage is a refused action's message on field, "" when err
// is not a validation error naming it.
func catalogFieldMessage(err error, field string) string {
	var ce *catalogclient.Error
	if !errors.As(err, &ce) || ce.Err != nil || ce.Status != 409 {
		return ""
	}
	return strings.Join(ce.Fields[field], "; ")
}

// withResolved adds the resolutions to a JSON object answer as its
// "resolved" member (an answer that is not an object stays as it is).
func withResolved(out []byte, resolved []Resolved) []byte {
	if len(resolved) == 0 {
		return out
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(out, &top) != nil || top == nil {
		return out
	}
	b, _ := json.Marshal(resolved)
	top["resolved"] = b
	o, err := json.Marshal(top)
	if err != nil {
		return out
	}
	return o
}
