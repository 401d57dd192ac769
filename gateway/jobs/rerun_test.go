package jobs

import (
	"strings"
	"testing"
)

// Two results of the same input compared row by row: the model's columns
// (and error) that changed are named per row, the input's are not.
func TestCompareResults(t *testing.T) {
	before := "id,smiles,p_blocker,class,error\n1,CCO,0.10,0,\n2,c1ccccc1,0.80,1,\n3,XX,,,invalid SMILES\n"
	after := "id,smiles,p_blocker,class,error\n1,CCO,0.10,0,\n2,c1ccccc1,0.40,0,\n3,XX,0.5,0,\n"
	d, err := compareResults(strings.NewReader(before), strings.NewReader(after), 2, "smiles")
	if err != nil {
		t.Fatal(err)
	}
	if d.Compared != 3 || d.Changed != 2 || len(d.Rows) != 2 {
		t.Fatalf("differences: %+v", d)
	}
	r := d.Rows[0]
	if r.Row != 2 || r.Input != "c1ccccc1" || r.From["p_blocker"] != "0.80" || r.To["p_blocker"] != "0.40" || r.To["class"] != "0" || len(r.From) != 2 {
		t.Fatalf("row 2: %+v", r)
	}
	if r := d.Rows[1]; r.From["error"] != "invalid SMILES" || r.To["error"] != "" {
		t.Fatalf("row 3: %+v", r)
	}
	if _, err := compareResults(strings.NewReader(before), strings.NewReader("id,smiles,p\n1,CCO,0\n"), 2, "smiles"); err == nil {
		t.Fatal("results of different lengths compared")
	}
}
