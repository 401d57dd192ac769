// Package serve turns an ml.Bundle into toxgate module endpoints: it decodes
// `{"smiles": "..."}` or `{"smiles": ["...", ...]}`, standardises and
// featurises each structure with the bundle's own featurizer, predicts every
// task with its applicability domain and answers one flat row per molecule
// (which the host also renders as CSV).
package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"toxgate/sdk/chem"
	"toxgate/sdk/ml"
	"toxgate/sdk/module"
)

// MaxBatch is the largest number of SMILES one request may hold.
const MaxBatch = 1000

// MaxSMILESLength is the longest SMILES an endpoint accepts (its input
// schema's maxLength, which the host enforces with a 422 naming it). It is
// below chem.MaxSMILESLength because Morgan environments take memory
// quadratic in the atom count: in a module's 64 MiB a 6,000-carbon chain
// fits and an 8,000-carbon one does not; 4,000 leaves room for SMILES with
// more bonds per character (gateway/server's TestEveryModelHoldsItsInputLimit
// calls every model at the limit and just over it).
const MaxSMILESLength = 4000

// DefaultConfidence is the confidence of the conformal prediction sets when
// a request names none.
const DefaultConfidence = 0.9

// Input is the request body of a structure-based endpoint.
type Input struct {
	// SMILES is one SMILES string or a list of up to MaxBatch.
	SMILES json.RawMessage `json:"smiles"`
	// Confidence is the confidence level of the conformal prediction sets,
	// in (0,1); nil means DefaultConfidence.
	Confidence *float64 `json:"confidence,omitempty"`
	// NearestCompounds asks each row for the nearest training compounds
	// (nearest_compounds, see NearestCompound).
	NearestCompounds bool `json:"nearest_compounds,omitempty"`
}

// confidence returns the requested confidence level, or an invalid-input
// error outside (0,1).
func (in Input) confidence() (float64, error) {
	if in.Confidence == nil {
		return DefaultConfidence, nil
	}
	c := *in.Confidence
	if !(c > 0 && c < 1) {
		return 0, module.InvalidInput("confidence", "must be a number strictly between 0 and 1, e.g. 0.9; got %g", c)
	}
	return c, nil
}

// InputSchema is the JSON Schema of Input.
// A list's items have no length bounds in it: an empty or too long SMILES
// of a list gets its row's error (Predict checks), as an unreadable one does.
// nearest_compounds has the example true, which the web page's form takes
// as its value, so that a run from the page shows the nearest compounds.
var InputSchema = fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["smiles"],"properties":{"smiles":{"description":"a SMILES string, or a list of up to %d SMILES for batch scoring (each at most %d characters)","oneOf":[{"type":"string","minLength":1,"maxLength":%d},{"type":"array","minItems":1,"maxItems":%d,"items":{"type":"string"}}]},"confidence":{"description":"confidence level of the conformal prediction sets (prediction_set holds the classes whose p-value exceeds 1 - confidence); default %g","type":"number","exclusiveMinimum":0,"exclusiveMaximum":1,"default":%g},"nearest_compounds":{"description":"also answer, in each row, nearest_compounds: the training compounds behind nearest_similarities (at most %d), with their SMILES, Dice similarity and experimental labels","type":"boolean","default":false,"examples":[true]}}}`,
	MaxBatch, MaxSMILESLength, MaxSMILESLength, MaxBatch, DefaultConfidence, DefaultConfidence, MaxNearestCompounds)

// Example is the original platform's example request.
const Example = `{"smiles":"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C"}`

// List returns the SMILES of the request and the field name of each.
func (in Input) List() ([]string, []string, error) {
	list, single, err := in.list()
	if err != nil {
		return nil, nil, err
	}
	fields := make([]string, len(list))
	for i := range fields {
		fields[i] = fieldName(i, single)
	}
	return list, fields, nil
}

// list returns the SMILES of the request and whether it was a single string.
func (in Input) list() ([]string, bool, error) {
	raw := bytes.TrimSpace(in.SMILES)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, module.InvalidInput("smiles", "is required: a SMILES string or a list of SMILES")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, module.InvalidInput("smiles", "is not a valid JSON string: %v", err)
		}
		return []string{s}, true, nil
	}
	if raw[0] != '[' {
		return nil, false, module.InvalidInput("smiles", "must be a string or a list of strings")
	}
	if out, ok := fastList(raw); ok {
		return out, false, checkLen(len(out))
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false, module.InvalidInput("smiles", "is not a valid JSON list: %v", err)
	}
	if err := checkLen(len(list)); err != nil {
		return nil, false, err
	}
	out := make([]string, len(list))
	for i, r := range list {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, false, module.InvalidInput(fieldName(i, false), "must be a string")
		}
	}
	return out, false, nil
}

func checkLen(n int) error {
	if n == 0 {
		return module.InvalidInput("smiles", "the list is empty")
	}
	if n > MaxBatch {
		return module.InvalidInput("smiles", "holds %d SMILES; at most %d per request", n, MaxBatch)
	}
	return nil
}

// fieldName names the input field of SMILES i: "smiles" for a single string,
// "smiles[i]" in a list.
func fieldName(i int, single bool) string {
	if single {
		return "smiles"
	}
	return "smiles[" + strconv.Itoa(i) + "]"
}

// fastList reads a JSON list of plain strings (printable ASCII without
// escapes, as SMILES are) without encoding/json, substrings of one copy of
// raw; ok is false for anything else, which List then reads with
// encoding/json (same result, errors included).
func fastList(raw []byte) (out []string, ok bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	n := 0
	for _, c := range raw {
		if c == '"' {
			n++
		}
	}
	if n%2 != 0 || n/2 > MaxBatch {
		return nil, false
	}
	all := string(raw) // one copy; the strings below share it
	out = make([]string, 0, n/2)
	i := skipSpace(all, 1)
	if i < len(all) && all[i] == ']' {
		return nil, false // empty: let List report it
	}
	for {
		if i >= len(all) || all[i] != '"' {
			return nil, false
		}
		j := i + 1
		for j < len(all) && all[j] != '"' {
			if c := all[j]; c < 0x20 || c > 0x7e || c == '\\' {
				return nil, false
			}
			j++
		}
		if j >= len(all) {
			return nil, false
		}
		out = append(out, all[i+1:j])
		i = skipSpace(all, j+1)
		if i >= len(all) {
			return nil, false
		}
		switch all[i] {
		case ',':
			i = skipSpace(all, i+1)
		case ']':
			if skipSpace(all, i+1) != len(all) {
				return nil, false
			}
			return out, true
		default:
			return nil, false
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// Extra computes extra features appended after the bundle featurizer's
// features (e.g. the predictions of other models), or nil.
type Extra func(m *chem.Mol, x ml.Sparse) ml.Sparse

// Server serves one bundle.
type Server struct {
	Bundle *ml.Bundle
	// Extra, if set, extends the feature vector before prediction.
	Extra Extra
	// sharedAD is the AD set index when every available task uses the same one.
	sharedAD int
	multi    bool
	columns  []string
	// head, keys and sharedKeys serve EvaluateJSON (see prepareEncoding).
	head       []byte
	keys       []rowKeys
	sharedKeys rowKeys
	confKey    []byte
}

// New decodes a bundle (as embedded by a module) and prepares its server.
func New(weights []byte) (*Server, error) {
	b, err := ml.DecodeBundle(weights)
	if err != nil {
		return nil, err
	}
	s := &Server{Bundle: b, sharedAD: -1, multi: len(b.Tasks) > 1}
	for _, t := range b.Tasks {
		if !t.Available {
			continue
		}
		switch {
		case s.sharedAD == -1:
			s.sharedAD = t.AD
		case s.sharedAD != t.AD:
			s.sharedAD = -2
		}
	}
	s.columns = s.makeColumns()
	s.prepareEncoding()
	return s, nil
}

// MustNew is New for package initialisation: it panics on a broken bundle.
func MustNew(weights []byte) *Server {
	s, err := New(weights)
	if err != nil {
		panic(err)
	}
	return s
}

func (s *Server) prefix(t *ml.Task) string {
	if !s.multi {
		return ""
	}
	return t.Key + "_"
}

func (s *Server) makeColumns() []string {
	cols := []string{"smiles"}
	for i := range s.Bundle.Tasks {
		t := &s.Bundle.Tasks[i]
		p := s.prefix(t)
		if s.multi {
			cols = append(cols, t.Key)
		} else {
			cols = append(cols, "prediction")
		}
		cols = append(cols, p+"label", p+"probability")
		if s.sharedAD < 0 {
			cols = append(cols, p+"applicability_domain", p+"nearest_similarities")
		}
	}
	if s.sharedAD >= 0 {
		cols = append(cols, "applicability_domain", "nearest_similarities")
	}
	for i := range s.Bundle.Tasks {
		p := s.prefix(&s.Bundle.Tasks[i])
		cols = append(cols, p+"prediction_set", p+"p_value_positive", p+"p_value_negative")
	}
	return append(cols, "confidence")
}

// Columns returns the column order of the result rows (for module.Endpoint.Table).
func (s *Server) Columns() []string { return s.columns }

// Output is the response of a structure-based endpoint.
type Output struct {
	Model   string     `json:"model"`
	Version string     `json:"version"`
	Tasks   []TaskInfo `json:"tasks"`
	// Results holds one row per input SMILES, in input order.
	Results []Row `json:"results"`
}

// TaskInfo describes a task in the response.
type TaskInfo struct {
	Key        string  `json:"key"`
	Title      string  `json:"title"`
	Definition string  `json:"definition"`
	Available  bool    `json:"available"`
	Reason     string  `json:"reason,omitempty"`
	Positive   string  `json:"positive_label,omitempty"`
	Negative   string  `json:"negative_label,omitempty"`
	Threshold  float64 `json:"threshold,omitempty"`
	Learner    string  `json:"learner,omitempty"`
	// ADRule states the applicability-domain rule of the task.
	ADRule string `json:"applicability_domain_rule,omitempty"`
	// Conformal states how the p-values and prediction sets are calibrated
	// and their measured coverage, or that the task has none.
	Conformal string `json:"conformal,omitempty"`
}

// Tasks describes the bundle's tasks.
func (s *Server) Tasks() []TaskInfo {
	b := s.Bundle
	out := make([]TaskInfo, len(b.Tasks))
	for i, t := range b.Tasks {
		ti := TaskInfo{Key: t.Key, Title: t.Title, Definition: t.Definition, Available: t.Available, Reason: t.Reason}
		if t.Available {
			ad := b.AD[t.AD]
			ti.Positive, ti.Negative, ti.Threshold, ti.Learner = t.Positive, t.Negative, round4(t.Threshold), t.Learner
			ti.ADRule = fmt.Sprintf("in AD when at least %d of the %d training structures have Dice similarity > %g on Morgan radius-3 1024-bit fingerprints",
				ad.MinNeighbours, ad.Len(), ad.Threshold)
			ti.Conformal = conformalText(t.Conformal)
		}
		out[i] = ti
	}
	return out
}

// Evaluate answers a request.
func (s *Server) Evaluate(in Input) (Output, error) {
	list, fields, err := in.List()
	if err != nil {
		return Output{}, err
	}
	conf, err := in.confidence()
	if err != nil {
		return Output{}, err
	}
	out := Output{Model: s.Bundle.Name, Version: s.Bundle.Version, Tasks: s.Tasks(), Results: make([]Row, len(list))}
	dense := make([]float32, s.maxFeatures())
	single := len(fields) == 1 && fields[0] == "smiles"
	for i, smi := range list {
		row, err := s.rowWith(smi, dense, conf, in.NearestCompounds)
		if err != nil {
			if single {
				return Output{}, module.InvalidInput(fields[i], "%v", err)
			}
			row = ErrorRow(smi, i, err)
		}
		out.Results[i] = row
	}
	return out, nil
}

// RowError is the member "error" of a result row whose SMILES was not
// scored: one invalid SMILES in a list leaves the other rows scored.
type RowError struct {
	// Message says why, e.g. "smiles: parse error at position 5: ...".
	Message string `json:"message"`
	// Field names the input, "smiles[i]".
	Field string `json:"field"`
	// Position is the row's index in the request's list (from 0).
	Position int `json:"position"`
}

// ErrorRow is the result row of SMILES i of a list that could not be scored.
func ErrorRow(smiles string, i int, err error) Row {
	r := Row{}
	r.Set("smiles", smiles)
	r.Set("error", RowError{Message: err.Error(), Field: fieldName(i, false), Position: i})
	return r
}

// Predict standardises one SMILES and returns the task predictions.
func (s *Server) Predict(smiles string, dense []float32) ([]ml.Prediction, error) {
	switch {
	case smiles == "":
		return nil, fmt.Errorf("smiles: empty")
	case len(smiles) > MaxSMILESLength:
		return nil, fmt.Errorf("smiles: has %d characters; this model accepts at most %d", len(smiles), MaxSMILESLength)
	}
	m, err := ml.Standardize(smiles)
	if err != nil {
		return nil, err
	}
	if m.NumHeavyAtoms() == 0 {
		return nil, fmt.Errorf("smiles: no heavy atoms")
	}
	x, fp := s.Bundle.Featurizer.FeaturesAndAD(m)
	if s.Extra != nil {
		x = s.Extra(m, x)
	}
	if len(dense) < s.maxFeatures() {
		dense = make([]float32, s.maxFeatures())
	}
	return s.Bundle.Predict(x, fp, dense), nil
}

// Row predicts one SMILES and lays the answer out as a result row, with
// prediction sets at DefaultConfidence.
func (s *Server) Row(smiles string, dense []float32) (Row, error) {
	return s.RowAt(smiles, dense, DefaultConfidence)
}

// RowAt is Row with prediction sets at confidence.
func (s *Server) RowAt(smiles string, dense []float32, confidence float64) (Row, error) {
	return s.rowWith(smiles, dense, confidence, false)
}

// rowWith is RowAt, with the nearest training compounds when nearest is set.
func (s *Server) rowWith(smiles string, dense []float32, confidence float64, nearest bool) (Row, error) {
	preds, err := s.Predict(smiles, dense)
	if err != nil {
		return Row{}, err
	}
	r := Row{}
	r.Set("smiles", smiles)
	var shared *ml.Domain
	for i := range preds {
		p := &preds[i]
		pre := s.prefix(p.Task)
		key := "prediction"
		if s.multi {
			key = p.Task.Key
		}
		if !p.Task.Available {
			r.Set(key, "not available")
			r.Set(pre+"label", "not available")
			r.Set(pre+"probability", nil)
			if s.sharedAD < 0 {
				r.Set(pre+"applicability_domain", nil)
				r.Set(pre+"nearest_similarities", nil)
			}
			continue
		}
		r.Set(key, b2i(p.Positive))
		r.Set(pre+"label", p.Label())
		r.Set(pre+"probability", round4(p.Probability))
		if s.sharedAD < 0 {
			r.Set(pre+"applicability_domain", adText(p.Domain))
			r.Set(pre+"nearest_similarities", p.Domain.Nearest)
		} else {
			shared = &p.Domain
		}
	}
	if shared != nil {
		r.Set("applicability_domain", adText(*shared))
		r.Set("nearest_similarities", shared.Nearest)
	}
	for i := range preds {
		p := &preds[i]
		pre := s.prefix(p.Task)
		c := Conformal(*p, confidence)
		if !c.OK {
			r.Set(pre+"prediction_set", nil)
			r.Set(pre+"p_value_positive", nil)
			r.Set(pre+"p_value_negative", nil)
			continue
		}
		r.Set(pre+"prediction_set", c.Set)
		r.Set(pre+"p_value_positive", c.PPositive)
		r.Set(pre+"p_value_negative", c.PNegative)
	}
	r.Set("confidence", confidence)
	if nearest {
		s.setNearest(&r, preds)
	}
	return r, nil
}

// ConformalAnswer is a task's conformal answer for one molecule.
type ConformalAnswer struct {
	// OK is false for a task that is unavailable or has no conformal calibration.
	OK bool
	// PPositive and PNegative are the class p-values (rounded to 4 digits).
	PPositive, PNegative float64
	// Set lists the class labels whose p-value exceeds 1 − confidence,
	// positive first; empty (not nil) when none does.
	Set []string
}

// Conformal computes the p-values and prediction set of prediction p at confidence.
func Conformal(p ml.Prediction, confidence float64) ConformalAnswer {
	t := p.Task
	if !t.Available || !t.Conformal.Ready() {
		return ConformalAnswer{}
	}
	pp, pn := t.Conformal.PValues(p.Probability)
	// The set compares the exact p-values; the answer shows them rounded.
	a := ConformalAnswer{OK: true, PPositive: round4(pp), PNegative: round4(pn), Set: []string{}}
	eps := ml.Significance(confidence)
	if pp > eps {
		a.Set = append(a.Set, t.Positive)
	}
	if pn > eps {
		a.Set = append(a.Set, t.Negative)
	}
	return a
}

// conformalText describes a task's conformal calibration for TaskInfo.
func conformalText(c *ml.Conformal) string {
	if !c.Ready() {
		return "no conformal calibration in this model's bundle: p_value_positive, p_value_negative and prediction_set are null"
	}
	return c.String()
}

func (s *Server) maxFeatures() int {
	n := 0
	for _, m := range s.Bundle.Models {
		n = max(n, m.NumFeatures)
	}
	return n
}

// setNearest sets the nearest_compounds member(s) of a row: one for a
// shared AD set, one per task otherwise (null for an unavailable task).
func (s *Server) setNearest(r *Row, preds []ml.Prediction) {
	if s.sharedAD >= 0 {
		for i := range preds {
			if preds[i].Task.Available {
				r.Set("nearest_compounds", s.Nearest(s.sharedAD, preds[i].Domain))
				return
			}
		}
		return
	}
	for i := range preds {
		p := &preds[i]
		if !p.Task.Available {
			r.Set(s.prefix(p.Task)+"nearest_compounds", nil)
			continue
		}
		r.Set(s.prefix(p.Task)+"nearest_compounds", s.Nearest(p.Task.AD, p.Domain))
	}
}

func adText(d ml.Domain) string {
	if d.InDomain {
		return "in AD"
	}
	return "out AD"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Row is one result row: an object whose members keep their insertion order
// when encoded, so the JSON and the CSV columns read alike.
type Row struct {
	keys []string
	vals []any
}

// Set appends or replaces a member.
func (r *Row) Set(k string, v any) {
	for i, kk := range r.keys {
		if kk == k {
			r.vals[i] = v
			return
		}
	}
	r.keys, r.vals = append(r.keys, k), append(r.vals, v)
}

// Get returns a member's value.
func (r Row) Get(k string) (any, bool) {
	for i, kk := range r.keys {
		if kk == k {
			return r.vals[i], true
		}
	}
	return nil, false
}

// MarshalJSON encodes the row as an object in insertion order.
func (r Row) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(r.vals[i])
		if err != nil {
			return nil, fmt.Errorf("row member %s: %w", k, err)
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// Endpoint makes the module endpoint at path serving s, with the summary and
// output description, the CSV table of the rows and the original's example.
func (s *Server) Endpoint(path, summary string) *module.Endpoint {
	return module.Handle(path, s.EvaluateJSON).
		Summary(summary).
		Schema(InputSchema).
		Example(Example).
		Output(s.OutputDescription()).
		Table("results", append(s.Columns(), "error")...).
		Batch("smiles", "results")
}

// OutputDescription describes the output rows for the API documentation.
func (s *Server) OutputDescription() string {
	var sb strings.Builder
	sb.WriteString("model, version, tasks (definition, threshold, learner, AD rule) and results: one row per input SMILES with ")
	sb.WriteString(strings.Join(s.columns, ", "))
	sb.WriteString(". prediction/<task> is 1 (positive label) or 0, or \"not available\" for a task without public training data; probability is the model's calibrated-by-CV score in [0,1], positive at or above the task threshold; applicability_domain is \"in AD\" or \"out AD\"; nearest_similarities are the Dice similarities of the nearest training structures; p_value_positive and p_value_negative are the Mondrian conformal p-values of the two classes, and prediction_set lists the class labels whose p-value exceeds 1 - confidence (the request's confidence, default 0.9): one label, both (uncertain) or none (unlike the training data); they are null for a task without conformal calibration (tasks[].conformal says so, or states the measured coverage). With \"nearest_compounds\": true in the request, each row also ends with nearest_compounds (<task>_nearest_compounds for per-task domains): the training compounds behind nearest_similarities, in the same order (at most 5), each {smiles, similarity, labels: {task: experimental label}}, null for a model that carries no training compounds. A SMILES of a list that cannot be read leaves its row in place with only smiles and error {message, field, position}; the other rows are scored (a single SMILES that cannot be read is refused with 422). CSV on Accept: text/csv, with an error column.")
	return sb.String()
}

// Validation summarises the bundle's cross-validation figures for the model card.
func (s *Server) Validation() string {
	var sb strings.Builder
	for _, t := range s.Bundle.Tasks {
		if !t.Available {
			fmt.Fprintf(&sb, "%s: not available (%s). ", t.Title, t.Reason)
			continue
		}
		fmt.Fprintf(&sb, "%s (%d structures, %d positive): %s, threshold %.3f;", t.Title, t.Data.Rows, t.Data.Positive, t.Learner, t.Threshold)
		for _, r := range t.CV {
			if r.Learner == t.Learner {
				fmt.Fprintf(&sb, " %s-split 5-fold CV ROC-AUC %.3f, PR-AUC %.3f, balanced accuracy %.3f;", r.Split, r.ROCAUC, r.PRAUC, r.BA)
			}
		}
		if c := t.Conformal; c.Ready() && len(c.Coverage) > 0 {
			sb.WriteString(" conformal prediction sets (Mondrian, per class) cover")
			for i, v := range c.Coverage {
				if i > 0 {
					sb.WriteString(",")
				}
				fmt.Fprintf(&sb, " %.3f at confidence %.2f", v.Overall, v.Confidence)
			}
			sb.WriteString(" of held-out half-split out-of-fold examples;")
		}
		sb.WriteString(" ")
	}
	fmt.Fprintf(&sb, "Reproduce with: %s", s.Bundle.Command)
	return strings.TrimSpace(sb.String())
}
