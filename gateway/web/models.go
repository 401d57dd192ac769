package web

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"mime"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
	"toxgate/gateway/internal/csvcell"
)

// WantsHTML reports whether a GET prefers an HTML page to JSON: its Accept
// names text/html before (or without) application/json, as browsers send.
func WantsHTML(ctx *fasthttp.RequestCtx) bool {
	accept := string(ctx.Request.Header.Peek("Accept"))
	h := strings.Index(accept, "text/html")
	if h < 0 {
		return false
	}
	j := strings.Index(accept, "application/json")
	return j < 0 || h < j
}

// ModelField is one input of a model's form, from its input schema.
type ModelField struct {
	Name, Label, Type, Description, Unit string
	Min, Max                             string
	Step                                 string
	Enum                                 []string
	Required                             bool
	List                                 bool // takes a list: one item per line
	ArrayOnly                            bool // takes only a list (else one item is sent alone)
	Value                                string
}

// modelRouteView is one endpoint's form.
type modelRouteView struct {
	Index  int
	Path   string
	Title  string
	Fields []ModelField
}

type modelData struct {
	M         ModelInfo
	Card      []cardSection
	Routes    []modelRouteView
	CanRun    bool
	LoginHref string
	Result    *modelResult
	Ran       int // index of the route that ran
}

// Chem reports whether the page shows or takes SMILES (a SMILES field, a
// result with SMILES): only then does it load the drawing script.
func (d modelData) Chem() bool {
	for _, rt := range d.Routes {
		for _, f := range rt.Fields {
			if isStructureField(f) {
				return true
			}
		}
	}
	return d.Result != nil && (len(d.Result.Resolved) > 0 || len(d.Result.Rows) > 0 || len(d.Result.Summary) > 0)
}

type cardSection struct {
	Title string
	Body  template.HTML
}

// modelResult is a model's answer as the page shows it.
type modelResult struct {
	Status   int
	Error    string
	Field    string
	Columns  []string
	Rows     [][]string
	Summary  [][2]string
	PlotSVG  template.URL
	JSON     string
	Trimmed  bool
	Filename string
	// Resolved are the inputs resolved from names or identifiers.
	Resolved []Resolved
	// Nearest are the nearest training compounds of the rows (takeNearest);
	// NearestMore says that rows past the listed ones have some too.
	Nearest     []nearestRow
	NearestMore bool
}

// ModelPage serves GET /models/{name} for a browser.
func (w *Web) ModelPage(ctx *fasthttp.RequestCtx) {
	r := w.load(ctx)
	w.modelView(r, fasthttp.StatusOK, nil, -1)
}

func (w *Web) modelView(r *req, status int, res *modelResult, ran int) {
	name := pathValue(r, "name")
	if w.o.Backend == nil {
		w.render(r, fasthttp.StatusServiceUnavailable, "message", "Models unavailable", map[string]string{"Text": "The model host is not attached."}, "", "")
		return
	}
	m, ok := w.o.Backend.Model(name)
	if !ok {
		w.render(r, fasthttp.StatusNotFound, "message", "No such model", map[string]string{"Text": "There is no model named " + name + "."}, "", "")
		return
	}
	d := modelData{M: m, Result: res, Ran: ran, CanRun: w.canRun(r), LoginHref: "/login?next=" + url.QueryEscape("/models/"+name)}
	c := m.Card
	for _, s := range []struct{ t, b string }{{"Summary", c.Summary}, {"Intended use", c.IntendedUse}, {"Data", c.Data},
		{"Method", c.Method}, {"Validation", c.Validation}, {"Limitations", c.Limitations}, {"License", c.License}} {
		if s.b != "" {
			d.Card = append(d.Card, cardSection{s.t, markdown(s.b)})
		}
	}
	if len(c.References) > 0 {
		d.Card = append(d.Card, cardSection{"References", markdown("- " + strings.Join(c.References, "\n- "))})
	}
	for i, rt := range m.Routes {
		var posted map[string]string
		if i == ran {
			posted = postedModelForm(r)
		}
		d.Routes = append(d.Routes, modelRouteView{Index: i, Path: rt.Path, Title: rt.Summary, Fields: formFields(rt, c.Units, posted)})
	}
	title := m.Title
	if title == "" {
		title = m.Name
	}
	w.render(r, status, "model", title, d, "", "")
}

// canRun: a logged-in user with the models role, or anyone when models are open.
func (w *Web) canRun(r *req) bool {
	if w.o.ModelsOpen {
		return true
	}
	c := r.catalogCaller()
	return !c.Anonymous() && c.HasRole(identity.RoleModels)
}

// schema is the part of a JSON Schema the form reads.
type schema struct {
	Type        any      `json:"type"`
	Description string   `json:"description"`
	Unit        string   `json:"x-unit"`
	UnitPlain   string   `json:"unit"`
	Minimum     *float64 `json:"minimum"`
	// ExclusiveMinimum is a lower bound the value must exceed; the form's
	// min attribute cannot say "exceed", so it shows it as the minimum and
	// the model's 422 explains the rest.
	ExclusiveMinimum *float64           `json:"exclusiveMinimum"`
	Maximum          *float64           `json:"maximum"`
	Enum             []any              `json:"enum"`
	Examples         []any              `json:"examples"`
	Default          any                `json:"default"`
	Items            *schema            `json:"items"`
	OneOf            []schema           `json:"oneOf"`
	AnyOf            []schema           `json:"anyOf"`
	Properties       map[string]*schema `json:"properties"`
	Required         []string           `json:"required"`
	Title            string             `json:"title"`
}

func (s *schema) typeName() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if n, _ := x.(string); n != "null" {
				return n
			}
		}
	}
	for _, alt := range append(s.OneOf, s.AnyOf...) {
		if n := alt.typeName(); n != "array" && n != "" {
			return n
		}
	}
	return ""
}

func (s *schema) takesList() bool {
	if s.typeName() == "array" {
		return true
	}
	for _, alt := range append(s.OneOf, s.AnyOf...) {
		if alt.typeName() == "array" {
			return true
		}
	}
	if t, ok := s.Type.([]any); ok {
		for _, x := range t {
			if x == "array" {
				return true
			}
		}
	}
	return false
}

// formFields builds a route's form fields: required ones first (in the
// schema's order), then the optional ones by name.
func formFields(rt ModelRoute, units map[string]string, posted map[string]string) []ModelField {
	var s schema
	if json.Unmarshal(rt.InputSchema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	var example map[string]any
	_ = json.Unmarshal(rt.Example, &example)
	names := append([]string(nil), s.Required...)
	var optional []string
	for n := range s.Properties {
		if !contains(s.Required, n) {
			optional = append(optional, n)
		}
	}
	sort.Strings(optional)
	names = append(names, optional...)
	out := make([]ModelField, 0, len(names))
	for _, n := range names {
		p := s.Properties[n]
		if p == nil {
			continue
		}
		f := ModelField{Name: n, Label: labelOf(n), Type: p.typeName(), Description: p.Description, Unit: firstOf(p.Unit, p.UnitPlain),
			Required: contains(s.Required, n), List: p.takesList()}
		if f.Type == "array" && p.Items != nil {
			f.ArrayOnly = true
			f.Type = p.Items.typeName()
			if p.Items.Unit != "" && f.Unit == "" {
				f.Unit = p.Items.Unit
			}
		}
		if f.Unit == "" {
			f.Unit = units[n]
		}
		if p.Minimum != nil {
			f.Min = num(*p.Minimum)
		} else if p.ExclusiveMinimum != nil {
			f.Min = num(*p.ExclusiveMinimum)
		}
		if p.Maximum != nil {
			f.Max = num(*p.Maximum)
		}
		if f.Type == "integer" {
			f.Step = "1"
		} else {
			f.Step = "any"
		}
		for _, e := range p.Enum {
			f.Enum = append(f.Enum, fmt.Sprint(e))
		}
		switch {
		case posted != nil:
			f.Value = posted[n]
		case example[n] != nil:
			f.Value = valueText(example[n])
		case len(p.Examples) > 0:
			f.Value = valueText(p.Examples[0])
		case p.Default != nil:
			f.Value = valueText(p.Default)
		}
		out = append(out, f)
	}
	return out
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// valueText is a JSON value as a form shows it (lists one item per line).
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return num(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = valueText(e)
		}
		return strings.Join(parts, "\n")
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// labelOf makes a field name readable: dose_mg → Dose mg.
func labelOf(name string) string {
	s := strings.ReplaceAll(name, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// formValue reads a posted field of an urlencoded or multipart form.
func formValue(ctx *fasthttp.RequestCtx, key string) string {
	if v := ctx.PostArgs().Peek(key); v != nil {
		return string(v)
	}
	if mf, err := ctx.MultipartForm(); err == nil {
		if vs := mf.Value[key]; len(vs) > 0 {
			return vs[0]
		}
		if fs := mf.File[key]; len(fs) > 0 {
			f, err := fs[0].Open()
			if err != nil {
				return ""
			}
			defer f.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(f)
			return b.String()
		}
	}
	return ""
}

// postedModelForm reads the f_<field> values of the run form.
func postedModelForm(r *req) map[string]string {
	out := map[string]string{}
	collect := func(k, v string) {
		if n, ok := strings.CutPrefix(k, "f_"); ok {
			out[n] = v
		}
	}
	r.ctx.PostArgs().VisitAll(func(k, v []byte) { collect(string(k), string(v)) })
	if mf, err := r.ctx.MultipartForm(); err == nil {
		for k, vs := range mf.Value {
			if len(vs) > 0 {
				collect(k, vs[0])
			}
		}
	}
	// A file of SMILES (one per line) fills an empty list field.
	if file := formValue(r.ctx, "list_file"); strings.TrimSpace(file) != "" {
		if n := formValue(r.ctx, "list_field"); n != "" && strings.TrimSpace(out[n]) == "" {
			out[n] = file
		}
	}
	return out
}

// inputJSON builds the model's JSON input from the posted fields.
func inputJSON(fields []ModelField) ([]byte, *modelResult) {
	in := map[string]any{}
	for _, f := range fields {
		v := strings.TrimSpace(f.Value)
		if v == "" {
			if f.Required {
				return nil, &modelResult{Status: fasthttp.StatusUnprocessableEntity, Error: "is required", Field: f.Name}
			}
			continue
		}
		var items []string
		if f.List {
			for _, line := range strings.Split(v, "\n") {
				if line = strings.TrimSpace(line); line != "" {
					items = append(items, line)
				}
			}
		} else {
			items = []string{v}
		}
		vals := make([]any, 0, len(items))
		for _, it := range items {
			switch f.Type {
			case "number", "integer":
				x, err := strconv.ParseFloat(it, 64)
				if err != nil {
					return nil, &modelResult{Status: fasthttp.StatusUnprocessableEntity, Error: strconv.Quote(it) + " is not a number", Field: f.Name}
				}
				vals = append(vals, x)
			case "boolean":
				vals = append(vals, it == "true" || it == "on" || it == "1")
			default:
				vals = append(vals, it)
			}
		}
		if f.ArrayOnly || (f.List && len(vals) > 1) {
			in[f.Name] = vals
		} else {
			in[f.Name] = vals[0]
		}
	}
	b, _ := json.Marshal(in)
	return b, nil
}

// modelRun serves POST /models/{name}/run: it runs the model as the
// session's user and shows the result, or (format=json|csv) returns it as
// a file to save.
func (w *Web) modelRun(r *req) {
	name := pathValue(r, "name")
	if !w.canRun(r) {
		if r.catalogCaller().Anonymous() {
			redirect(r.ctx, "/login?next="+url.QueryEscape("/models/"+name))
			return
		}
		w.render(r, fasthttp.StatusForbidden, "message", "Not allowed", map[string]string{"Text": "Running models needs the models role: ask an administrator to grant it."}, "", "")
		return
	}
	m, ok := w.o.Backend.Model(name)
	if !ok {
		w.render(r, fasthttp.StatusNotFound, "message", "No such model", map[string]string{"Text": "There is no model named " + name + "."}, "", "")
		return
	}
	idx, err := strconv.Atoi(formValue(r.ctx, "route"))
	if err != nil || idx < 0 || idx >= len(m.Routes) {
		idx = 0
	}
	rt := m.Routes[idx]
	fields := formFields(rt, m.Card.Units, postedModelForm(r))
	resolved, bad := w.resolveStructureFields(r, fields)
	if bad != nil {
		w.modelView(r, bad.Status, bad, idx)
		return
	}
	body, bad := inputJSON(fields)
	if bad != nil {
		w.modelView(r, bad.Status, bad, idx)
		return
	}
	format := formValue(r.ctx, "format")
	accept := "application/json"
	if format == "csv" {
		accept = "text/csv, application/json;q=0.5"
	}
	status, ctype, out := w.o.Backend.RunModel(rt.Path, body, accept, r.catalogCaller(), r.ctx.RemoteIP().String())
	base := strings.Trim(strings.ReplaceAll(rt.Path, "/", "-"), "-")
	if status == fasthttp.StatusOK && (format == "json" || format == "csv") {
		securityHeaders(r.ctx)
		mt, _, _ := mime.ParseMediaType(ctype)
		switch {
		case format == "json" || mt == "text/csv":
			if mt == "text/csv" {
				ctype = "text/csv; charset=utf-8"
			} else {
				out = withResolved(out, resolved)
			}
			r.ctx.SetContentType(ctype)
			r.ctx.SetBody(out)
		default:
			csvOut, ok := flattenCSV(out, rt.Table)
			if !ok {
				w.modelView(r, fasthttp.StatusNotAcceptable, &modelResult{Status: fasthttp.StatusNotAcceptable, Error: "this model's output has no table to save as CSV; save it as JSON"}, idx)
				return
			}
			r.ctx.SetContentType("text/csv; charset=utf-8")
			r.ctx.SetBody(csvOut)
		}
		ext := ".json"
		if format == "csv" {
			ext = ".csv"
		}
		r.ctx.Response.Header.Set("Content-Disposition", `attachment; filename="`+base+ext+`"`)
		return
	}
	res := resultOf(status, out, rt)
	res.Filename = base
	res.Resolved = resolved
	code := fasthttp.StatusOK
	if status != fasthttp.StatusOK {
		code = status
	}
	w.modelView(r, code, res, idx)
}

// resultOf reads a model's JSON answer for the page.
func resultOf(status int, out []byte, rt ModelRoute) *modelResult {
	res := &modelResult{Status: status}
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		res.Error = "the model's answer is not a JSON object"
		return res
	}
	if status != fasthttp.StatusOK {
		if e, ok := top["error"].(map[string]any); ok {
			res.Error, _ = e["message"].(string)
			res.Field, _ = e["field"].(string)
		}
		if res.Error == "" {
			res.Error = "the model answered " + strconv.Itoa(status)
		}
		return res
	}
	const maxJSON = 20000
	pretty, _ := json.MarshalIndent(top, "", "  ")
	if len(pretty) > maxJSON {
		pretty, res.Trimmed = pretty[:maxJSON], true
	}
	res.JSON = string(pretty)
	tableField := rt.Table
	if tableField == "" {
		for _, k := range []string{"predictions", "results"} {
			if _, ok := top[k].([]any); ok {
				tableField = k
			}
		}
	}
	if rows, ok := top[tableField].([]any); ok && tableField != "" {
		res.Nearest, res.NearestMore = takeNearest(rows)
		res.Columns, res.Rows = tableOf(rows, cell)
	}
	if svg, ok := top["plot_svg"].(string); ok && strings.Contains(svg, "<svg") {
		// An <img> runs no script and loads nothing, whatever the SVG holds.
		res.PlotSVG = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg)))
	}
	summary := top
	if s, ok := top["summary"].(map[string]any); ok {
		summary = s
	}
	keys := make([]string, 0, len(summary))
	for k := range summary {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == tableField || k == "plot_svg" {
			continue
		}
		switch v := summary[k].(type) {
		case string:
			if len(v) < 300 {
				res.Summary = append(res.Summary, [2]string{k, v})
			}
		case json.Number:
			res.Summary = append(res.Summary, [2]string{k, cell(v)})
		case bool:
			res.Summary = append(res.Summary, [2]string{k, fmt.Sprint(v)})
		case map[string]any:
			// A small object of figures (provenance, units): "key: value" pairs.
			if len(v) <= 12 {
				sub := make([]string, 0, len(v))
				for sk := range v {
					sub = append(sub, sk)
				}
				sort.Strings(sub)
				parts := make([]string, 0, len(v))
				for _, sk := range sub {
					parts = append(parts, sk+": "+cell(v[sk]))
				}
				if line := strings.Join(parts, "; "); len(line) < 400 {
					res.Summary = append(res.Summary, [2]string{k, line})
				}
			}
		}
	}
	return res
}

// tableOf makes rows of flat objects into a table (columns in the first row's order).
func tableOf(rows []any, cell func(any) string) ([]string, [][]string) {
	var cols []string
	seen := map[string]bool{}
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !seen[k] {
					seen[k] = true
					cols = append(cols, k)
				}
			}
		}
	}
	// Put the identifying and predicting columns first.
	sort.SliceStable(cols, func(i, j int) bool { return colRank(cols[i]) < colRank(cols[j]) })
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		m, _ := r.(map[string]any)
		rec := make([]string, len(cols))
		for i, c := range cols {
			rec[i] = cell(m[c])
		}
		out = append(out, rec)
	}
	return cols, out
}

func colRank(c string) int {
	for i, k := range []string{"smiles", "input", "prediction", "label", "probability", "applicability_domain", "in_domain", "nearest_similarities", "similarity"} {
		if strings.Contains(c, k) {
			return i
		}
	}
	return 100
}

// cell is a value as a page shows it: numbers with a fraction to 4
// significant digits, lists joined with commas. Files (Download CSV) take
// the exact cell instead (csvcell.Value).
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		if f, err := x.Float64(); err == nil && strings.ContainsAny(string(x), ".eE") {
			return strconv.FormatFloat(f, 'g', 4, 64)
		}
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cell(e)
		}
		return strings.Join(parts, ", ")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// flattenCSV renders a JSON answer as CSV: its table of rows, else its
// time series (one column per series), for outputs the model host does
// not render as CSV itself.
func flattenCSV(out []byte, tableField string) ([]byte, bool) {
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if dec.Decode(&top) != nil {
		return nil, false
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if rows, ok := top[tableField].([]any); ok && tableField != "" {
		cols, recs := tableOf(rows, csvcell.Value)
		cw.Write(cols)
		cw.WriteAll(recs)
		return buf.Bytes(), cw.Error() == nil
	}
	ts, ok := top["time_series"].(map[string]any)
	if !ok {
		return nil, false
	}
	var cols []string
	var series [][]any
	add := func(name string, v any) {
		if arr, ok := v.([]any); ok {
			cols = append(cols, name)
			series = append(series, arr)
		}
	}
	keys := make([]string, 0, len(ts))
	for k := range ts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return strings.HasPrefix(keys[i], "time") && !strings.HasPrefix(keys[j], "time") })
	for _, k := range keys {
		switch v := ts[k].(type) {
		case []any:
			add(k, v)
		case map[string]any:
			sub := make([]string, 0, len(v))
			for s := range v {
				sub = append(sub, s)
			}
			sort.Strings(sub)
			for _, s := range sub {
				add(k+"."+s, v[s])
			}
		}
	}
	if len(cols) == 0 {
		return nil, false
	}
	cw.Write(cols)
	for i := 0; ; i++ {
		rec := make([]string, len(cols))
		any := false
		for j, s := range series {
			if i < len(s) {
				rec[j], any = csvcell.Value(s[i]), true
			}
		}
		if !any {
			break
		}
		cw.Write(rec)
	}
	cw.Flush()
	return buf.Bytes(), cw.Error() == nil
}
