package e2e

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

// A scoring job reads compound names, CAS numbers and DTXSIDs in its
// structure column through the catalog's resolver (the one of GET
// /chem/resolve), scores the resolved SMILES and records the resolution
// beside each prediction; SMILES go to the model as written, and a CAS
// number with a wrong check digit is that row's error.
func TestScoringJobResolvesNames(t *testing.T) {
	f := newJobFixture(t, []string{"herg"})
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"compound_id", "smiles"})
	inputs := []string{"Aspirin", "50-78-2", "DTXSID2020006", "CCO", "50-78-3", "C1CC(not-a-smiles"}
	for i, s := range inputs {
		w.Write([]string{string(rune('A' + i)), s})
	}
	w.Flush()
	id := f.submit(t, f.g, f.upload(t, "names.csv", buf.Bytes()))
	st := waitJob(t, f.g, f.editor, id, 5*time.Minute, "over", over)
	_, rows := f.resultTable(t, st)
	if len(rows) != len(inputs)+1 {
		t.Fatalf("%d lines", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, c := range []string{"prediction", "resolved_smiles", "resolved_by", "resolved_dtxsid", "resolved_sources", "error"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("no column %s in %v", c, rows[0])
		}
	}
	get := func(r int, c string) string { return rows[r+1][col[c]] }
	for r, want := range []struct{ by, dtxsid string }{{"preferred_name", "DTXSID5020108"}, {"cas", "DTXSID5020108"}, {"dtxsid", "DTXSID2020006"}} {
		if get(r, "resolved_by") != want.by || get(r, "resolved_dtxsid") != want.dtxsid || get(r, "resolved_smiles") == "" ||
			get(r, "prediction") == "" || get(r, "error") != "" || !strings.Contains(get(r, "resolved_sources"), "smiles=") {
			t.Errorf("row %q: %v", inputs[r], rows[r+1])
		}
		if get(r, "smiles") != inputs[r] {
			t.Errorf("row %q: the input cell became %q", inputs[r], get(r, "smiles"))
		}
	}
	if get(3, "resolved_smiles") != "" || get(3, "prediction") == "" {
		t.Errorf("SMILES row: %v", rows[4])
	}
	if !strings.Contains(get(4, "error"), "check digit") || get(4, "prediction") != "" {
		t.Errorf("wrong CAS row: %v", rows[5])
	}
	if get(5, "error") == "" || get(5, "resolved_smiles") != "" {
		t.Errorf("bad SMILES row: %v", rows[6])
	}
	if st["failed_rows"] != 2.0 {
		t.Errorf("status: %v", st)
	}
}
