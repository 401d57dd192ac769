package web

import (
	"bytes"
	"encoding/csv"
	"html/template"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
)

// PreviewBytes is how much of a file the resource page reads for its
// preview (one Range request to the download route).
const PreviewBytes = 64 << 10

// PreviewRows is the number of table rows a preview shows.
const PreviewRows = 50

type resourceData struct {
	D           Dataset
	R           Resource
	Description template.HTML
	Preview     *preview
	NoPreview   string
	CanEdit     bool
	// Score lists the models that can score this table into a new
	// resource of the dataset (empty: no scoring form).
	Score []scoreModel
	// ScoreColumns are the table's columns; SMILESColumn the one picked.
	ScoreColumns []string
	SMILESColumn string
}

// preview is the start of a file (a table for CSV and TSV, else text), or
// a page of a DataStore table with its column filters.
type preview struct {
	Header     []string
	Rows       [][]string
	Text       string
	Note       string
	Prev, Next string
	// DataStore only: the filters applied and the form's state.
	DataStore bool
	Filters   []Filter
	Columns   []string
	Base      string
}

func (w *Web) resourcePage(r *req) {
	d, err := w.showDataset(r, pathValue(r, "id"))
	if err != nil {
		w.catalogFail(r, "Dataset", err)
		return
	}
	rid := pathValue(r, "resource_id")
	var res *Resource
	for i := range d.Resources {
		if d.Resources[i].ID == rid {
			res = &d.Resources[i]
		}
	}
	if res == nil {
		w.render(r, fasthttp.StatusNotFound, "message", "Resource not found", map[string]string{"Text": "This dataset has no such resource."}, "", "")
		return
	}
	data := resourceData{D: d, R: *res, Description: markdown(res.Description), CanEdit: w.canUpdate(r, &d)}
	data.Preview, data.NoPreview = w.preview(r, &d, res)
	if data.CanEdit && w.o.Jobs != nil && res.Uploaded() && w.canRun(r) && r.catalogCaller().HasRole(identity.RoleModels) &&
		data.Preview != nil && len(data.Preview.Header) > 0 {
		data.Score = w.scoreModels(r)
		for _, c := range data.Preview.Header {
			if c != "_id" {
				data.ScoreColumns = append(data.ScoreColumns, c)
			}
		}
		for _, c := range data.ScoreColumns {
			if strings.EqualFold(c, "smiles") || (data.SMILESColumn == "" && strings.Contains(strings.ToLower(c), "smiles")) {
				data.SMILESColumn = c
			}
		}
	}
	w.render(r, fasthttp.StatusOK, "resource", res.DisplayName(), data, w.doneFlash(r), "")
}

// textFormats are formats previewed as text.
var textFormats = map[string]bool{"CSV": true, "TSV": true, "TXT": true, "JSON": true, "XML": true, "MD": true,
	"SDF": true, "SMI": true, "SMILES": true, "MOL": true, "YAML": true, "YML": true, "TAB": true, "FASTA": true}

func previewable(res *Resource) bool {
	if textFormats[strings.ToUpper(res.Format)] {
		return true
	}
	mt := strings.ToLower(res.Mimetype)
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml"
}

// preview reads the start of an uploaded text file through the download
// route (with the page's own cookie, so the same authorization applies).
func (w *Web) preview(r *req, d *Dataset, res *Resource) (*preview, string) {
	if res.DatastoreActive {
		if p, err := w.datastorePreview(r, d, res); err == nil {
			return p, ""
		} else {
			w.log.Warn("web: datastore preview", "resource", res.ID, "err", err)
		}
	}
	if !res.Uploaded() {
		return nil, "No preview: the resource is a link to another site."
	}
	if !previewable(res) {
		return nil, "No preview for this format; download the file to open it."
	}
	if w.o.Backend == nil {
		return nil, "No preview: the file store is not attached."
	}
	hdr := map[string]string{"Range": "bytes=0-" + strconv.Itoa(PreviewBytes-1)}
	if c := r.ctx.Request.Header.Cookie(SessionCookie); len(c) > 0 {
		hdr["Cookie"] = SessionCookie + "=" + string(c)
	}
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	w.o.Backend.Get("/dataset/"+url.PathEscape(d.ID)+"/resource/"+url.PathEscape(res.ID)+"/download", hdr, resp)
	status := resp.StatusCode()
	if status != fasthttp.StatusOK && status != fasthttp.StatusPartialContent {
		if status == fasthttp.StatusRequestedRangeNotSatisfiable {
			return nil, "The file is empty."
		}
		return nil, "No preview: the file could not be read (" + strconv.Itoa(status) + ")."
	}
	body := resp.Body()
	truncated := status == fasthttp.StatusPartialContent &&
		!strings.HasSuffix(string(resp.Header.Peek("Content-Range")), "/"+strconv.Itoa(len(body)))
	if truncated {
		// Keep whole lines (and whole UTF-8 characters) only.
		if i := bytes.LastIndexByte(body, '\n'); i > 0 {
			body = body[:i+1]
		}
	}
	for len(body) > 0 && !utf8.Valid(body) {
		body = body[:len(body)-1]
	}
	format := strings.ToUpper(res.Format)
	if format == "CSV" || format == "TSV" || format == "TAB" || strings.Contains(res.Mimetype, "csv") || strings.Contains(res.Mimetype, "tab-separated") {
		if p := tablePreview(body, format != "CSV" && !strings.Contains(res.Mimetype, "csv")); p != nil {
			p.Note = "The first " + strconv.Itoa(len(p.Rows)) + " rows"
			if truncated || len(p.Rows) == PreviewRows {
				p.Note += " of the file; download it for the rest."
			} else {
				p.Note += " (the whole file)."
			}
			return p, ""
		}
	}
	p := &preview{Text: string(body), Note: "The whole file."}
	if truncated {
		p.Note = "The first " + strconv.Itoa(len(body)) + " bytes of the file; download it for the rest."
	}
	return p, ""
}

// tablePreview parses the start of a CSV (or TSV) file.
func tablePreview(body []byte, tabs bool) *preview {
	cr := csv.NewReader(bytes.NewReader(body))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	if tabs {
		cr.Comma = '\t'
	}
	header, err := cr.Read()
	if err != nil {
		return nil
	}
	p := &preview{Header: header}
	for len(p.Rows) < PreviewRows {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			break
		}
		p.Rows = append(p.Rows, rec)
	}
	return p
}

// datastorePreview pages through a DataStore table with datastore_search:
// PreviewRows rows from ?offset=, filtered by ?f_<column>=value (the
// filter form adds one from ?col= and ?val=).
func (w *Web) datastorePreview(r *req, d *Dataset, res *Resource) (*preview, error) {
	args := r.ctx.QueryArgs()
	offset, _ := strconv.Atoi(string(args.Peek("offset")))
	offset = max(offset, 0)
	filters := map[string]string{}
	args.VisitAll(func(k, v []byte) {
		if col, ok := strings.CutPrefix(string(k), "f_"); ok && col != "" && len(v) > 0 {
			filters[col] = string(v)
		}
	})
	if col, val := string(args.Peek("col")), string(args.Peek("val")); col != "" && val != "" {
		filters[col] = val
	}
	q := map[string]any{"resource_id": res.ID, "limit": PreviewRows, "offset": offset, "records_format": "lists"}
	if len(filters) > 0 {
		q["filters"] = filters
	}
	var out struct {
		Fields []struct {
			ID string `json:"id"`
		} `json:"fields"`
		Records [][]any `json:"records"`
		Total   int     `json:"total"`
	}
	if err := w.call(r, "datastore_search", q, &out); err != nil {
		return nil, err
	}
	base := "/dataset/" + url.PathEscape(d.Name) + "/resource/" + url.PathEscape(res.ID)
	p := &preview{DataStore: true, Base: base}
	// _id is the DataStore's row number: not shown.
	for _, f := range out.Fields {
		if f.ID != "_id" {
			p.Header = append(p.Header, f.ID)
		}
	}
	p.Columns = p.Header
	for _, rec := range out.Records {
		row := make([]string, 0, len(rec))
		for i, v := range rec {
			if i < len(out.Fields) && out.Fields[i].ID != "_id" {
				row = append(row, cell(v))
			}
		}
		p.Rows = append(p.Rows, row)
	}
	state := url.Values{}
	cols := make([]string, 0, len(filters))
	for c := range filters {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	for _, c := range cols {
		state.Set("f_"+c, filters[c])
	}
	at := func(off int, v url.Values) string {
		u := url.Values{}
		for k, vs := range v {
			u[k] = vs
		}
		if off > 0 {
			u.Set("offset", strconv.Itoa(off))
		}
		if len(u) == 0 {
			return base + "#preview"
		}
		return base + "?" + u.Encode() + "#preview"
	}
	for _, c := range cols {
		rest := url.Values{}
		for k, vs := range state {
			if k != "f_"+c {
				rest[k] = vs
			}
		}
		p.Filters = append(p.Filters, Filter{Field: c, Value: filters[c], RemoveHref: at(0, rest)})
	}
	if offset > 0 {
		p.Prev = at(max(0, offset-PreviewRows), state)
	}
	if offset+len(out.Records) < out.Total {
		p.Next = at(offset+PreviewRows, state)
	}
	if len(out.Records) == 0 {
		p.Note = "No rows match."
	} else {
		p.Note = "Rows " + strconv.Itoa(offset+1) + "–" + strconv.Itoa(offset+len(out.Records)) + " of " + strconv.Itoa(out.Total) + " (DataStore table)."
	}
	return p, nil
}
