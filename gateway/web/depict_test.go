package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// Only cells of SMILES columns are marked for drawing, at most
// DepictPerTable of a table, each a one-line SMILES of at most
// DepictMaxSMILES bytes; every cell keeps its text.
func TestDepictCellsBounds(t *testing.T) {
	header := []string{"compound", "Canonical_SMILES", "label"}
	var rows [][]string
	for i := range DepictPerTable + 50 {
		rows = append(rows, []string{"c" + strconv.Itoa(i), "CCO", "CCO"})
	}
	rows[0][1] = strings.Repeat("C", DepictMaxSMILES+1)
	rows[1][1] = ""
	rows[2][1] = "CC\nO"
	rows[3][1] = strings.Repeat("C", DepictMaxSMILES)
	rows = append(rows, []string{"short row"})
	cells := depictCells(header, rows)
	marked := 0
	for i, row := range cells {
		for j, c := range row {
			if c.Text != rows[i][j] {
				t.Fatalf("cell %d,%d text %q, want %q", i, j, c.Text, rows[i][j])
			}
			if c.Depict {
				marked++
				if j != 1 {
					t.Errorf("cell %d,%d of column %q marked", i, j, header[j])
				}
			}
		}
	}
	if marked != DepictPerTable {
		t.Errorf("%d cells marked, want the bound %d", marked, DepictPerTable)
	}
	if cells[0][1].Depict || cells[1][1].Depict || cells[2][1].Depict {
		t.Error("a SMILES too long, empty or of two lines is marked")
	}
	if !cells[3][1].Depict {
		t.Error("a SMILES at the length bound is not marked")
	}
	if got := depictCells([]string{"a", "b"}, [][]string{{"CCO", "CCO"}}); got[0][0].Depict || got[0][1].Depict {
		t.Error("a table without a SMILES column has marked cells")
	}
}

// The preview and the model result mark their SMILES cells for the
// script, as text (hostile text escaped), and the pages load the drawing
// script only when the library is embedded.
func TestTemplatesMarkSMILES(t *testing.T) {
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	evil := `<img src=x onerror=alert(1)>`
	d := Dataset{ID: "id1", Name: "ds", Resources: []Resource{{ID: "r1", Name: "t"}}}
	pages := map[string]any{
		"resource": resourceData{D: d, R: d.Resources[0], Preview: &preview{Header: []string{"name", "smiles"}, Rows: [][]string{{"CCO", "CCO"}, {"x", evil}}}},
		"model": modelData{M: ModelInfo{Name: "m"}, Routes: []modelRouteView{{Path: "/m", Fields: []ModelField{{Name: "smiles", List: true}}}},
			CanRun: true, Result: &modelResult{Columns: []string{"smiles", "p"}, Rows: [][]string{{"c1ccccc1O", "0.5"}},
				Summary:  [][2]string{{"input_smiles", "CCN"}, {"note", "CCC"}},
				Resolved: []Resolved{{Input: "caffeine", SMILES: "Cn1cnc2c1c(=O)n(C)c(=O)n2C"}, {Input: "long", SMILES: strings.Repeat("C", DepictMaxSMILES+1)}}}},
	}
	for page, data := range pages {
		var buf bytes.Buffer
		if err := w.pages[page].ExecuteTemplate(&buf, "layout.html", view{Data: data, CSRF: "c"}); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		html := buf.String()
		if strings.Contains(html, "<img src=x") {
			t.Errorf("%s: hostile SMILES became markup", page)
		}
		want := map[string][]string{
			"resource": {`<td>CCO</td><td><span class="smiles" data-depict>CCO</span></td>`, `data-depict>&lt;img src=x`},
			"model": {`<td><span class="smiles" data-depict>c1ccccc1O</span></td><td>0.5</td>`, `data-smiles-input`,
				`<td><span class="smiles" data-depict>CCN</span></td>`, `<td>CCC</td>`,
				`<code class="break smiles" data-depict>Cn1cnc2c1c(=O)n(C)c(=O)n2C</code>`, `<code class="break">` + strings.Repeat("C", DepictMaxSMILES+1) + `</code>`},
		}[page]
		for _, s := range want {
			if !strings.Contains(html, s) {
				t.Errorf("%s: no %s in\n%s", page, s, html)
			}
		}
		if got := strings.Contains(html, `src="/static/chem.js"`); got != (oclJS != nil) {
			t.Errorf("%s: loads chem.js %v, library embedded %v", page, got, oclJS != nil)
		}
	}
	// A model without a SMILES field, and no result, loads no drawing script.
	var buf bytes.Buffer
	plain := modelData{M: ModelInfo{Name: "pbpk"}, Routes: []modelRouteView{{Path: "/p", Fields: []ModelField{{Name: "dose_mg", Type: "number"}}}}}
	if err := w.pages["model"].ExecuteTemplate(&buf, "layout.html", view{Data: plain}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "chem.js") {
		t.Error("a model page without SMILES loads the drawing script")
	}
}

// gzipStatic answers gzip to a client that accepts it and the plain body
// to one that does not; both are the same bytes.
func TestGzipStatic(t *testing.T) {
	body := bytes.Repeat([]byte("export const x = 1;\n"), 5000)
	h := gzipStatic("text/javascript; charset=utf-8", body)
	for _, enc := range []string{"gzip, deflate, br", ""} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod("GET")
		if enc != "" {
			ctx.Request.Header.Set("Accept-Encoding", enc)
		}
		h(&ctx)
		got := ctx.Response.Body()
		if enc != "" {
			if string(ctx.Response.Header.Peek("Content-Encoding")) != "gzip" || len(got) >= len(body) {
				t.Fatalf("accept %q: encoding %q, %d bytes", enc, ctx.Response.Header.Peek("Content-Encoding"), len(got))
			}
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if got, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		} else if len(ctx.Response.Header.Peek("Content-Encoding")) != 0 {
			t.Fatal("gzip sent to a client that did not ask for it")
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("accept %q: body differs", enc)
		}
		if string(ctx.Response.Header.Peek("Vary")) != "Accept-Encoding" {
			t.Errorf("no Vary: Accept-Encoding")
		}
	}
}

// FuzzDepictCells: whatever the header and cells, every cell keeps its
// text, and only bounded one-line SMILES of SMILES columns are marked.
func FuzzDepictCells(f *testing.F) {
	f.Add("smiles", "CCO", 3)
	f.Add("SMILES_in", "C1CC((X", 1)
	f.Add("name", "CCO", 200)
	f.Add("smiles", strings.Repeat("c", 400), 2)
	f.Add("smiles", "C\r\nC", 5)
	f.Fuzz(func(t *testing.T, col, val string, n int) {
		n = min(max(n, 0), 300)
		header := []string{"id", col}
		rows := make([][]string, n)
		for i := range rows {
			rows[i] = []string{strconv.Itoa(i), val}
		}
		marked := 0
		for i, row := range depictCells(header, rows) {
			for j, c := range row {
				if c.Text != rows[i][j] {
					t.Fatalf("text changed")
				}
				if c.Depict {
					marked++
					v := strings.TrimSpace(val)
					if j != 1 || !smilesColumn(col) || len(v) > DepictMaxSMILES || strings.ContainsAny(v, "\r\n") || v == "" {
						t.Fatalf("cell %d,%d %q of column %q marked", i, j, c.Text, header[j])
					}
				}
			}
		}
		if marked > DepictPerTable {
			t.Fatalf("%d marked", marked)
		}
	})
}
