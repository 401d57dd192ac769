package serve

import (
	"encoding/json"
	"math"
	"strconv"

	"toxgate/sdk/ml"
	"toxgate/sdk/module"
)

// The module endpoint answers with EvaluateJSON: the bytes encoding/json
// writes for Evaluate's Output, appended into one buffer without reflection,
// interface values or a re-validation of each row (encoding a 1000-row answer
// with encoding/json cost ~40 ms inside a module).

// rowKeys are the encoded member names (`,"name":`) of one task's columns.
type rowKeys struct {
	pred, label, prob, ad, near []byte
	set, ppos, pneg             []byte
	compounds                   []byte
}

// prepareEncoding precomputes the answer's head and the encoded column names;
// it leaves s.head nil (EvaluateJSON then encodes with encoding/json) when two
// columns share a name, where Row.Set would replace instead of append.
func (s *Server) prepareEncoding() {
	seen := map[string]bool{}
	for _, c := range s.columns {
		if seen[c] {
			return
		}
		seen[c] = true
	}
	key := func(k string) []byte {
		b, _ := json.Marshal(k)
		return append(append([]byte{','}, b...), ':')
	}
	s.keys = make([]rowKeys, len(s.Bundle.Tasks))
	for i := range s.Bundle.Tasks {
		t := &s.Bundle.Tasks[i]
		pre, name := s.prefix(t), "prediction"
		if s.multi {
			name = t.Key
		}
		s.keys[i] = rowKeys{key(name), key(pre + "label"), key(pre + "probability"),
			key(pre + "applicability_domain"), key(pre + "nearest_similarities"),
			key(pre + "prediction_set"), key(pre + "p_value_positive"), key(pre + "p_value_negative"),
			key(pre + "nearest_compounds")}
	}
	s.sharedKeys = rowKeys{ad: key("applicability_domain"), near: key("nearest_similarities"), compounds: key("nearest_compounds")}
	s.confKey = key("confidence")
	head, err := json.Marshal(Output{Model: s.Bundle.Name, Version: s.Bundle.Version, Tasks: s.Tasks(), Results: []Row{}})
	if err != nil || len(head) < 3 || string(head[len(head)-3:]) != "[]}" {
		return
	}
	s.head = head[:len(head)-2] // ends with `"results":[`
}

// EvaluateJSON answers a request as Evaluate does, encoded as JSON: the same
// bytes as encoding/json gives for Evaluate's Output, and the same errors.
func (s *Server) EvaluateJSON(in Input) (module.RawJSON, error) {
	if s.head == nil {
		return s.evaluateWithEncodingJSON(in)
	}
	list, single, err := in.list()
	if err != nil {
		return nil, err
	}
	conf, err := in.confidence()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(s.head)+len(list)*(96+24*len(s.Bundle.Tasks))+2)
	buf = append(buf, s.head...)
	dense := make([]float32, s.maxFeatures())
	for i, smi := range list {
		preds, err := s.Predict(smi, dense)
		if err != nil && single {
			return nil, module.InvalidInput(fieldName(i, single), "%v", err)
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		if err != nil {
			buf = appendErrorRow(buf, smi, i, err)
			continue
		}
		var ok bool
		if buf, ok = s.appendRow(buf, smi, preds, conf, in.NearestCompounds); !ok {
			return s.evaluateWithEncodingJSON(in) // a value encoding/json refuses: its error
		}
	}
	return append(buf, ']', '}'), nil
}

func (s *Server) evaluateWithEncodingJSON(in Input) (module.RawJSON, error) {
	out, err := s.Evaluate(in)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, module.Internal("encoding the output: %v", err)
	}
	return b, nil
}

// appendRow appends the row that Row would lay out for preds, as
// Row.MarshalJSON encodes it; ok is false for a value encoding/json refuses
// (NaN or infinite probability). nearest adds the nearest compounds.
func (s *Server) appendRow(b []byte, smiles string, preds []ml.Prediction, confidence float64, nearest bool) ([]byte, bool) {
	b = append(b, `{"smiles":`...)
	b = appendString(b, smiles)
	ok := true
	var shared *ml.Domain
	for i := range preds {
		p, k := &preds[i], &s.keys[i]
		if !p.Task.Available {
			b = append(append(b, k.pred...), `"not available"`...)
			b = append(append(b, k.label...), `"not available"`...)
			b = append(append(b, k.prob...), "null"...)
			if s.sharedAD < 0 {
				b = append(append(b, k.ad...), "null"...)
				b = append(append(b, k.near...), "null"...)
			}
			continue
		}
		b = append(append(b, k.pred...), byte('0'+b2i(p.Positive)))
		b = appendString(append(b, k.label...), p.Label())
		b = appendFloat(append(b, k.prob...), round4(p.Probability), &ok)
		if s.sharedAD < 0 {
			b = appendDomain(b, k, &p.Domain, &ok)
		} else {
			shared = &p.Domain
		}
	}
	if shared != nil {
		b = appendDomain(b, &s.sharedKeys, shared, &ok)
	}
	for i := range preds {
		k := &s.keys[i]
		c := Conformal(preds[i], confidence)
		if !c.OK {
			b = append(append(b, k.set...), "null"...)
			b = append(append(b, k.ppos...), "null"...)
			b = append(append(b, k.pneg...), "null"...)
			continue
		}
		b = append(append(b, k.set...), '[')
		for j, l := range c.Set {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, l)
		}
		b = append(b, ']')
		b = appendFloat(append(b, k.ppos...), c.PPositive, &ok)
		b = appendFloat(append(b, k.pneg...), c.PNegative, &ok)
	}
	b = appendFloat(append(b, s.confKey...), confidence, &ok)
	if nearest {
		b = s.appendNearestMembers(b, preds, &ok)
	}
	return append(b, '}'), ok
}

// appendNearestMembers appends the members setNearest sets.
func (s *Server) appendNearestMembers(b []byte, preds []ml.Prediction, ok *bool) []byte {
	if s.sharedAD >= 0 {
		for i := range preds {
			if preds[i].Task.Available {
				return s.appendNearest(b, s.sharedKeys.compounds, s.sharedAD, &preds[i].Domain, ok)
			}
		}
		return b
	}
	for i := range preds {
		p := &preds[i]
		if !p.Task.Available {
			b = append(append(b, s.keys[i].compounds...), "null"...)
			continue
		}
		b = s.appendNearest(b, s.keys[i].compounds, p.Task.AD, &p.Domain, ok)
	}
	return b
}

func appendDomain(b []byte, k *rowKeys, d *ml.Domain, ok *bool) []byte {
	b = append(b, k.ad...)
	if d.InDomain {
		b = append(b, `"in AD"`...)
	} else {
		b = append(b, `"out AD"`...)
	}
	b = append(b, k.near...)
	if d.Nearest == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range d.Nearest {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, v, ok)
	}
	return append(b, ']')
}

// appendString appends s as encoding/json writes it (HTML characters escaped).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			e, _ := json.Marshal(s)
			return append(b, e...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendFloat appends f as encoding/json writes a float64; *ok becomes false
// for NaN and infinities, which it refuses.
func appendFloat(b []byte, f float64, ok *bool) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		*ok = false
		return append(b, '0')
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	b = strconv.AppendFloat(b, f, fmt, -1, 64)
	if fmt == 'e' { // e-09 to e-9, as encoding/json
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendErrorRow appends ErrorRow(smiles, i, err) as encoding/json encodes it.
func appendErrorRow(b []byte, smiles string, i int, err error) []byte {
	b = append(b, `{"smiles":`...)
	b = appendString(b, smiles)
	b = append(b, `,"error":{"message":`...)
	b = appendString(b, err.Error())
	b = append(b, `,"field":"smiles[`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `]","position":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, '}', '}')
}
