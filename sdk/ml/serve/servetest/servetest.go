// Package servetest has helpers for testing modules built on sdk/ml/serve:
// evaluate a request body, read one row as a map, check input errors.
package servetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/ml"
	"toxgate/sdk/ml/serve"
)

// Eval evaluates a JSON request body on s.
func Eval(tb testing.TB, s *serve.Server, body string) (serve.Output, error) {
	tb.Helper()
	var in serve.Input
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		tb.Fatalf("request %s: %v", body, err)
	}
	return s.Evaluate(in)
}

// Row evaluates one SMILES and returns its result row as decoded JSON.
func Row(tb testing.TB, s *serve.Server, smiles string) map[string]any {
	tb.Helper()
	out, err := Eval(tb, s, fmt.Sprintf(`{"smiles":%q}`, smiles))
	if err != nil {
		tb.Fatalf("%s: %v", smiles, err)
	}
	b, err := json.Marshal(out.Results[0])
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// CheckCommon checks what every structure endpoint must do: answer the
// original's example with a probability in (0,1) and AD columns per task,
// keep batch order, and refuse a bad SMILES with its field and position.
func CheckCommon(t *testing.T, s *serve.Server) {
	t.Helper()
	CheckFeatures(t, s)
	out, err := Eval(t, s, serve.Example)
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	if out.Model != s.Bundle.Name || out.Version == "" || len(out.Results) != 1 || len(out.Tasks) != len(s.Bundle.Tasks) {
		t.Fatalf("example output %+v", out)
	}
	row := Row(t, s, "C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C")
	for _, c := range s.Columns() {
		if _, ok := row[c]; !ok {
			t.Errorf("row lacks column %q: %v", c, row)
		}
	}
	for k, v := range row {
		if strings.HasSuffix(k, "probability") && v != nil {
			if p := v.(float64); p <= 0 || p >= 1 {
				t.Errorf("%s = %v", k, p)
			}
		}
		if strings.HasSuffix(k, "applicability_domain") && v != nil && v != "in AD" && v != "out AD" {
			t.Errorf("%s = %v", k, v)
		}
	}
	batch, err := Eval(t, s, `{"smiles":["CCO","CC(=O)Oc1ccccc1C(=O)O","c1ccccc1"]}`)
	if err != nil || len(batch.Results) != 3 {
		t.Fatalf("batch: %v", err)
	}
	if v, _ := batch.Results[1].Get("smiles"); v != "CC(=O)Oc1ccccc1C(=O)O" {
		t.Fatalf("batch order: row 1 is %v", v)
	}
	mixed, err := Eval(t, s, `{"smiles":["CCO","CC(C)Xx","c1ccccc1"]}`)
	if err != nil || len(mixed.Results) != 3 {
		t.Fatalf("list with a bad SMILES: %v", err)
	}
	bad, _ := mixed.Results[1].Get("error")
	if e, ok := bad.(serve.RowError); !ok || e.Field != "smiles[1]" || e.Position != 1 || !strings.Contains(e.Message, "position 5") {
		t.Fatalf("bad SMILES row: %+v", mixed.Results[1])
	}
	for _, i := range []int{0, 2} {
		if _, hasErr := mixed.Results[i].Get("error"); hasErr {
			t.Fatalf("row %d has an error: %+v", i, mixed.Results[i])
		}
		if _, ok := mixed.Results[i].Get(s.Columns()[2]); !ok {
			t.Fatalf("row %d not scored: %+v", i, mixed.Results[i])
		}
	}
	_, err = Eval(t, s, `{"smiles":"CC(C)Xx"}`)
	var e *abi.Error
	if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "smiles" || !strings.Contains(e.Message, "position 5") {
		t.Fatalf("bad single SMILES: %v", err)
	}
	CheckConformal(t, s)
}

// CheckConformal checks the conformal columns of every task: with a
// conformal calibration, p-values in (0,1] and a prediction set of the
// task's labels whose p-value exceeds 1 − confidence, at the default and a
// requested confidence; without one, null columns and a task note saying so.
func CheckConformal(t *testing.T, s *serve.Server) {
	t.Helper()
	const smi = "C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C"
	preds, err := s.Predict(smi, nil)
	if err != nil {
		t.Fatal(err)
	}
	infos := s.Tasks()
	for _, conf := range []float64{serve.DefaultConfidence, 0.5} {
		out, err := Eval(t, s, fmt.Sprintf(`{"smiles":%q,"confidence":%g}`, smi, conf))
		if err != nil {
			t.Fatalf("confidence %g: %v", conf, err)
		}
		row := out.Results[0]
		if v, _ := row.Get("confidence"); v != conf {
			t.Errorf("confidence column %v, want %v", v, conf)
		}
		for i, p := range preds {
			pre := ""
			if len(s.Bundle.Tasks) > 1 {
				pre = p.Task.Key + "_"
			}
			set, _ := row.Get(pre + "prediction_set")
			pp, _ := row.Get(pre + "p_value_positive")
			pn, _ := row.Get(pre + "p_value_negative")
			if !p.Task.Available || !p.Task.Conformal.Ready() {
				if set != nil || pp != nil || pn != nil {
					t.Errorf("%s: task without conformal calibration answers %v %v %v", p.Task.Key, set, pp, pn)
				}
				if p.Task.Available && !strings.Contains(infos[i].Conformal, "no conformal calibration") {
					t.Errorf("%s: task note %q does not say it has no conformal calibration", p.Task.Key, infos[i].Conformal)
				}
				continue
			}
			a := serve.Conformal(p, conf)
			if !(a.PPositive > 0 && a.PPositive <= 1 && a.PNegative > 0 && a.PNegative <= 1) {
				t.Errorf("%s: p-values %v %v", p.Task.Key, a.PPositive, a.PNegative)
			}
			labels, _ := set.([]string)
			if fmt.Sprint(labels) != fmt.Sprint(a.Set) || pp != a.PPositive || pn != a.PNegative {
				t.Errorf("%s at %g: set %v p %v %v, want %v p %v %v", p.Task.Key, conf, set, pp, pn, a.Set, a.PPositive, a.PNegative)
			}
			for _, l := range labels {
				if l != p.Task.Positive && l != p.Task.Negative {
					t.Errorf("%s: set label %q is not one of the task's", p.Task.Key, l)
				}
			}
			if !strings.Contains(infos[i].Conformal, "measured coverage") {
				t.Errorf("%s: task note %q does not state the measured coverage", p.Task.Key, infos[i].Conformal)
			}
		}
	}
	CheckJSON(t, s, fmt.Sprintf(`{"smiles":[%q,"CCO"],"confidence":0.95}`, smi))
	_, err = Eval(t, s, `{"smiles":"CCO","confidence":1}`)
	var e *abi.Error
	if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "confidence" {
		t.Errorf("confidence 1: %v", err)
	}
}

// Probability returns the probability of the task with the given key for smiles.
func Probability(tb testing.TB, s *serve.Server, smiles, key string) float64 {
	tb.Helper()
	col := "probability"
	if len(s.Bundle.Tasks) > 1 {
		col = key + "_probability"
	}
	v, ok := Row(tb, s, smiles)[col].(float64)
	if !ok {
		tb.Fatalf("%s: no %s", smiles, col)
	}
	return v
}

// CVAUC returns the chosen learner's cross-validated ROC-AUC of a task on a split.
func CVAUC(s *serve.Server, key, split string) float64 {
	for _, t := range s.Bundle.Tasks {
		if t.Key != key {
			continue
		}
		for _, r := range t.CV {
			if r.Learner == t.Learner && r.Split == split {
				return r.ROCAUC
			}
		}
	}
	return 0
}

// CheckFeatures fails when the features the serving code computes differ from
// those the bundle was trained on (sdk/chem or sdk/ml changed): the weights
// must then be retrained with the module's training command.
func CheckFeatures(t *testing.T, s *serve.Server) {
	t.Helper()
	if got := ml.FeatureDigest(s.Bundle.Featurizer); got != s.Bundle.FeatureDigest {
		t.Errorf("%s: feature digest %s, trained with %s: the feature code changed since training; rerun %s",
			s.Bundle.Name, got, s.Bundle.FeatureDigest, s.Bundle.Command)
	}
}

// CheckJSON checks that the endpoint's encoder (EvaluateJSON) answers the
// same bytes as encoding/json gives for Evaluate's output, and the same
// errors, for each request body.
func CheckJSON(t *testing.T, s *serve.Server, bodies ...string) {
	t.Helper()
	for _, body := range bodies {
		var in serve.Input
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatalf("request %.80s: %v", body, err)
		}
		out, werr := s.Evaluate(in)
		got, err := s.EvaluateJSON(in)
		if werr != nil || err != nil {
			if werr == nil || err == nil || werr.Error() != err.Error() {
				t.Errorf("%s: request %.80s: EvaluateJSON error %v, Evaluate error %v", s.Bundle.Name, body, err, werr)
			}
			continue
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: request %.80s:\nEvaluateJSON %.300s\nencoding/json %.300s", s.Bundle.Name, body, got, want)
		}
	}
}

// BenchBatch scores one request of n molecules, drawn in turn from smiles,
// per iteration of b, and reports the time per molecule (µs/molecule).
func BenchBatch(b *testing.B, s *serve.Server, n int, smiles ...string) {
	list := make([]string, n)
	for i := range list {
		list[i] = smiles[i%len(smiles)]
	}
	raw, err := json.Marshal(list)
	if err != nil {
		b.Fatal(err)
	}
	in := serve.Input{SMILES: raw}
	for b.Loop() {
		if _, err := s.Evaluate(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/molecule")
}
