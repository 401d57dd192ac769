package servetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"reflect"
	"testing"

	"toxgate/sdk/ml"
	"toxgate/sdk/ml/serve"
)

// CheckNearest checks nearest_compounds on the given SMILES: without the
// request's flag a row has no such member; with it, the row holds every
// member it had before, in the same order with the same values, and then,
// per applicability domain, at most serve.MaxNearestCompounds training
// compounds whose similarities are the row's nearest_similarities, each a
// compound whose own fingerprint has that Dice similarity with the query,
// labelled with its tasks' class labels. Both encoders answer alike.
func CheckNearest(t *testing.T, s *serve.Server, smiles ...string) {
	t.Helper()
	list, _ := json.Marshal(smiles)
	plain := evalRows(t, s, fmt.Sprintf(`{"smiles":%s}`, list))
	body := fmt.Sprintf(`{"smiles":%s,"nearest_compounds":true}`, list)
	near := evalRows(t, s, body)
	CheckJSON(t, s, body)
	for i, smi := range smiles {
		p, n := plain[i], near[i]
		for _, k := range p.keys {
			if k == "nearest_compounds" || len(k) > len("_nearest_compounds") && k[len(k)-len("_nearest_compounds"):] == "_nearest_compounds" {
				t.Fatalf("%s: a row without the flag has %s", smi, k)
			}
		}
		if len(n.keys) <= len(p.keys) || !reflect.DeepEqual(n.keys[:len(p.keys)], p.keys) || !reflect.DeepEqual(n.vals[:len(p.keys)], p.vals) {
			t.Fatalf("%s: the flag changed the row's other members:\n%v\n%v", smi, p.keys, n.keys)
		}
		m, err := ml.Standardize(smi)
		if err != nil {
			t.Fatal(err)
		}
		q := ml.ADFingerprint(m)
		for j, k := range n.keys[len(p.keys):] {
			pre := k[:len(k)-len("nearest_compounds")]
			sims, _ := n.get(pre + "nearest_similarities").([]any)
			if sims == nil {
				sims, _ = n.get("nearest_similarities").([]any)
			}
			comps, ok := n.vals[len(p.keys)+j].([]any)
			if !ok {
				if n.vals[len(p.keys)+j] != nil || sims != nil {
					t.Fatalf("%s: %s is %v", smi, k, n.vals[len(p.keys)+j])
				}
				continue // an unavailable task
			}
			if len(comps) != min(len(sims), serve.MaxNearestCompounds) || len(comps) == 0 {
				t.Fatalf("%s: %d nearest compounds for %d similarities", smi, len(comps), len(sims))
			}
			for c, v := range comps {
				cm := v.(map[string]any)
				if cm["similarity"] != sims[c] {
					t.Fatalf("%s: compound %d similarity %v, nearest_similarities %v", smi, c, cm["similarity"], sims)
				}
				csmi, _ := cm["smiles"].(string)
				ref, err := ml.Standardize(csmi)
				if err != nil {
					t.Fatalf("%s: compound %q: %v", smi, csmi, err)
				}
				if d := dice(q, ml.ADFingerprint(ref)); d != sims[c] {
					t.Fatalf("%s: compound %q has Dice %v with the query, the answer says %v", smi, csmi, d, sims[c])
				}
				labels, _ := cm["labels"].(map[string]any)
				if len(labels) == 0 {
					t.Fatalf("%s: compound %q has no labels", smi, csmi)
				}
				for key, l := range labels {
					task := taskByKey(s, key)
					if task == nil || (l != task.Positive && l != task.Negative) {
						t.Fatalf("%s: compound %q label %s=%v is not a class of a task", smi, csmi, key, l)
					}
				}
			}
		}
	}
}

func taskByKey(s *serve.Server, key string) *ml.Task {
	for i := range s.Bundle.Tasks {
		if s.Bundle.Tasks[i].Key == key {
			return &s.Bundle.Tasks[i]
		}
	}
	return nil
}

// dice is the Dice similarity of two fingerprints rounded as the answer rounds it.
func dice(a, b []uint64) float64 {
	and, n := 0, 0
	for i := range a {
		and += bits.OnesCount64(a[i] & b[i])
		n += bits.OnesCount64(a[i]) + bits.OnesCount64(b[i])
	}
	return float64(int64(2*float64(and)/float64(n)*10000+0.5)) / 10000
}

// orderedRow is a decoded result row with its member order.
type orderedRow struct {
	keys []string
	vals []any
}

func (r orderedRow) get(k string) any {
	for i, kk := range r.keys {
		if kk == k {
			return r.vals[i]
		}
	}
	return nil
}

// evalRows answers body with the endpoint's encoder and decodes its rows in order.
func evalRows(t *testing.T, s *serve.Server, body string) []orderedRow {
	t.Helper()
	var in serve.Input
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	raw, err := s.EvaluateJSON(in)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	rows := make([]orderedRow, len(out.Results))
	for i, r := range out.Results {
		dec := json.NewDecoder(bytes.NewReader(r))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			rows[i].keys = append(rows[i].keys, k.(string))
			rows[i].vals = append(rows[i].vals, v)
		}
	}
	return rows
}
