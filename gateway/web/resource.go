package web

import (
	"bytes"
	"encoding/csv"
	"html/template"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"
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
}

// preview is the start of a file: a table for CSV and TSV, else text.
type preview struct {
	Header     []string
	Rows       [][]string
	Text       string
	Note       string
	Prev, Next string
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
