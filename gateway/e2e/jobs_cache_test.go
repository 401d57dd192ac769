package e2e

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"testing"
	"time"
)

// A scoring job over a table that repeats its structures computes each
// distinct structure once (the response cache's miss counter grows by the
// distinct structures, bad ones included), and every row gets the answer
// of its structure, in place.
func TestScoringJobScoresEachStructureOnce(t *testing.T) {
	f := newJobFixture(t, []string{"herg"})
	full := library(t, 40)
	recs, err := csv.NewReader(bytes.NewReader(full)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{"C1CC(not-a-smiles": true}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"compound_id", "smiles"})
	const rows = 400
	for i := 0; i < rows; i++ {
		s := recs[1+i%40][1]
		if i%97 == 5 {
			s = "C1CC(not-a-smiles"
		}
		distinct[s] = true
		w.Write([]string{fmt.Sprintf("R-%04d", i), s})
	}
	w.Flush()
	_, misses0 := cacheCounters(t, f.g)
	id := f.submit(t, f.g, f.upload(t, "repeats.csv", buf.Bytes()))
	st := waitJob(t, f.g, f.editor, id, 10*time.Minute, "over", over)
	_, out := f.resultTable(t, st)
	if len(out) != rows+1 {
		t.Fatalf("result has %d lines, want header + %d", len(out), rows)
	}
	_, misses := cacheCounters(t, f.g)
	if got := misses - misses0; got != float64(len(distinct)) {
		t.Errorf("%d rows of %d distinct structures: %v computed", rows, len(distinct), got)
	}
	head := out[0]
	pred := -1
	for i, h := range head {
		if h == "probability" {
			pred = i
		}
	}
	if pred < 0 {
		t.Fatalf("no probability column in %v", head)
	}
	bySMILES := map[string]string{}
	for i, r := range out[1:] {
		bad := r[1] == "C1CC(not-a-smiles"
		if bad != (r[len(r)-1] != "") {
			t.Fatalf("row %d: %v", i, r)
		}
		if p, seen := bySMILES[r[1]]; seen && p != r[pred] {
			t.Fatalf("row %d (%s): probability %s, an earlier row of the same structure %s", i, r[1], r[pred], p)
		}
		bySMILES[r[1]] = r[pred]
	}
}
