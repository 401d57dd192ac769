package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand"
	"strings"
	"testing"

	"toxgate/sdk/abi"
	"toxgate/sdk/ml"
)

// testServer serves a small bundle of two tasks on one model: "with" has a
// conformal predictor, "without" (as in a bundle trained before conformal
// prediction) has none.
func testServer(t *testing.T) *Server { return newTestServer(t) }

func newTestServer(t testing.TB) *Server {
	t.Helper()
	var recs []ml.Record
	for _, smi := range []string{"CCO", "CCCO", "CCCCO", "c1ccccc1", "c1ccccc1O", "c1ccccc1N", "CC(=O)O", "CCN", "CCCl", "c1ccncc1"} {
		pos := float32(0)
		if strings.Contains(smi, "c1") {
			pos = 1
		}
		recs = append(recs, ml.Record{SMILES: smi, Labels: []float32{pos}})
	}
	ds := ml.Curate(ml.DefaultFeaturizer, []string{"aromatic"}, recs)
	m, err := ml.Fit(ml.Spec{Kind: ml.KindGBT, Trees: 5, Depth: 2, Seed: 1}, ds.X, ds.Y, ml.DefaultFeaturizer.NumFeatures())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	y := make([]bool, 400)
	p := make([]float64, 400)
	for i := range y {
		y[i] = i%3 == 0
		p[i] = r.Float64()
		if y[i] {
			p[i] = 1 - p[i]*p[i]
		}
	}
	task := func(key string, model int, c *ml.Conformal) ml.Task {
		return ml.Task{Key: key, Title: key, Available: true, Model: model, Output: 0, AD: 0,
			Threshold: 0.5, Positive: "active", Negative: "inactive", Conformal: c}
	}
	b := &ml.Bundle{Name: "t", Version: "1.0.0", Featurizer: ml.DefaultFeaturizer, Models: []*ml.Model{m, m},
		AD:    []*ml.ADSet{ml.NewADSet(ds.FP, 0.3, 3)},
		Tasks: []ml.Task{task("with", 0, ml.FitConformal(y, p, 1)), task("without", 1, nil)}}
	labels := make([]float32, len(ds.Y))
	for i, yr := range ds.Y {
		labels[i] = yr[0]
	}
	if err := b.AttachCompounds(0, ds.FP, ds.SMILES, map[int][]float32{0: labels, 1: labels}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := b.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	s, err := New(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func evalBody(t *testing.T, s *Server, body string) (Output, error) {
	t.Helper()
	var in Input
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	return s.Evaluate(in)
}

// Each result row carries the class p-values and the prediction set at the
// requested confidence (0.9 by default) after every column it had before;
// a task without conformal calibration answers null and says why.
func TestRowsCarryConformalPValuesAndSets(t *testing.T) {
	s := testServer(t)
	cols := s.Columns()
	wantTail := []string{"applicability_domain", "nearest_similarities",
		"with_prediction_set", "with_p_value_positive", "with_p_value_negative",
		"without_prediction_set", "without_p_value_positive", "without_p_value_negative", "confidence"}
	if got := cols[len(cols)-len(wantTail):]; strings.Join(got, ",") != strings.Join(wantTail, ",") {
		t.Fatalf("columns end with %v, want %v", got, wantTail)
	}
	c := s.Bundle.Tasks[0].Conformal
	for _, tc := range []struct {
		body string
		conf float64
	}{
		{`{"smiles":["CCO","c1ccccc1O","CCCCCCCCO"]}`, 0.9},
		{`{"smiles":["CCO","c1ccccc1O","CCCCCCCCO"],"confidence":0.5}`, 0.5},
		{`{"smiles":"c1ccccc1N","confidence":0.99}`, 0.99},
		{`{"smiles":"c1ccccc1N","confidence":0.8}`, 0.8},
	} {
		out, err := evalBody(t, s, tc.body)
		if err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		for i, row := range out.Results {
			smi, _ := row.Get("smiles")
			pr, err := s.Predict(smi.(string), nil)
			if err != nil {
				t.Fatal(err)
			}
			wantPos, wantNeg := c.PValues(pr[0].Probability)
			inPos, inNeg := c.Set(pr[0].Probability, tc.conf)
			var want []string
			if inPos {
				want = append(want, "active")
			}
			if inNeg {
				want = append(want, "inactive")
			}
			set, _ := row.Get("with_prediction_set")
			pp, _ := row.Get("with_p_value_positive")
			pn, _ := row.Get("with_p_value_negative")
			if strings.Join(set.([]string), ",") != strings.Join(want, ",") || pp != round4(wantPos) || pn != round4(wantNeg) {
				t.Errorf("%s row %d: set %v p %v %v; want %v p %v %v", tc.body, i, set, pp, pn, want, round4(wantPos), round4(wantNeg))
			}
			for _, k := range []string{"without_prediction_set", "without_p_value_positive", "without_p_value_negative"} {
				if v, ok := row.Get(k); !ok || v != nil {
					t.Errorf("%s row %d: %s = %v, want null", tc.body, i, k, v)
				}
			}
			if v, _ := row.Get("confidence"); v != tc.conf {
				t.Errorf("%s row %d: confidence %v, want %v", tc.body, i, v, tc.conf)
			}
		}
		if !strings.Contains(out.Tasks[0].Conformal, "Mondrian conformal prediction calibrated on 400") ||
			!strings.Contains(out.Tasks[1].Conformal, "no conformal calibration") {
			t.Errorf("%s: task conformal notes %q, %q", tc.body, out.Tasks[0].Conformal, out.Tasks[1].Conformal)
		}
		checkJSON(t, s, tc.body)
	}
}

// A higher confidence never gives a smaller prediction set.
func TestPredictionSetsGrowWithConfidence(t *testing.T) {
	s := testServer(t)
	pr, err := s.Predict("c1ccccc1O", nil)
	if err != nil {
		t.Fatal(err)
	}
	prev := 0
	for _, conf := range []float64{0.01, 0.2, 0.5, 0.8, 0.9, 0.95, 0.999} {
		n := len(Conformal(pr[0], conf).Set)
		if n < prev {
			t.Fatalf("at %v the set has %d classes, %d at a lower confidence", conf, n, prev)
		}
		prev = n
	}
	if prev != 2 {
		t.Fatalf("at 0.999 the set has %d classes, want both", prev)
	}
}

// A confidence outside (0,1) is refused with an input error naming the
// field, by both encoders, before any SMILES is read.
func TestConfidenceOutOfRangeIsRefused(t *testing.T) {
	s := testServer(t)
	for _, c := range []string{"0", "1", "-0.1", "1.5", "100", "1e-400", "-0"} {
		body := `{"smiles":"CCO","confidence":` + c + `}`
		var in Input
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatal(err)
		}
		for name, call := range map[string]func() error{
			"Evaluate":     func() error { _, err := s.Evaluate(in); return err },
			"EvaluateJSON": func() error { _, err := s.EvaluateJSON(in); return err },
		} {
			err := call()
			var e *abi.Error
			if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != "confidence" {
				t.Errorf("%s confidence %s: %v", name, c, err)
			}
		}
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(InputSchema), &schema); err != nil {
		t.Fatal(err)
	}
	cs := schema.Properties["confidence"]
	if cs["type"] != "number" || cs["exclusiveMinimum"] != 0.0 || cs["exclusiveMaximum"] != 1.0 || cs["default"] != DefaultConfidence {
		t.Fatalf("schema of confidence: %v", cs)
	}
}

// checkJSON is servetest.CheckJSON (which imports this package).
func checkJSON(t *testing.T, s *Server, body string) {
	t.Helper()
	var in Input
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	out, err := s.Evaluate(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.EvaluateJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s:\nEvaluateJSON  %s\nencoding/json %s", body, got, want)
	}
}

// FuzzConfidence: any request body with any confidence is answered by
// both encoders alike (same bytes or same error), without a panic; an
// accepted confidence is in (0,1).
func FuzzConfidence(f *testing.F) {
	for _, seed := range []string{
		`{"smiles":"CCO","confidence":0.9}`, `{"smiles":["CCO","c1ccccc1O"],"confidence":0.5}`,
		`{"smiles":"CCO","confidence":1e-300}`, `{"smiles":"CCO","confidence":0.9999999999999999}`,
		`{"smiles":"CCO","confidence":-0}`, `{"smiles":"CC(C)Xx","confidence":2}`, `{"smiles":"CCO"}`,
	} {
		f.Add(seed)
	}
	s := newTestServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		var in Input
		if json.Unmarshal([]byte(body), &in) != nil {
			return
		}
		out, werr := s.Evaluate(in)
		got, err := s.EvaluateJSON(in)
		if (werr == nil) != (err == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("%s: EvaluateJSON error %v, Evaluate error %v", body, err, werr)
		}
		if err != nil {
			return
		}
		if in.Confidence != nil && !(*in.Confidence > 0 && *in.Confidence < 1) {
			t.Fatalf("%s: confidence %v accepted", body, *in.Confidence)
		}
		want, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s:\nEvaluateJSON  %s\nencoding/json %s", body, got, want)
		}
	})
}
