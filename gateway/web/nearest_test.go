package web

import (
	"fmt"
	"strings"
	"testing"
)

// A result's nearest compounds leave the result table for their own list,
// per row and domain (sorted), with labels as text; past maxNearestRows
// rows they are not listed and NearestMore says so.
func TestResultListsNearestCompoundsBounded(t *testing.T) {
	var rows []string
	for i := 0; i < maxNearestRows+20; i++ {
		rows = append(rows, fmt.Sprintf(`{"smiles":"C%d","prediction":1,"nearest_similarities":[0.5,0.25],"confidence":0.9,`+
			`"b_nearest_compounds":[{"smiles":"CCO","similarity":0.5,"labels":{"b":"active"}}],`+
			`"a_nearest_compounds":[{"smiles":"CCN","similarity":0.5,"labels":{"y":"x","a":"inactive"}},{"smiles":"c1ccccc1","similarity":0.25,"labels":{}}]}`, i))
	}
	out := `{"results":[` + strings.Join(rows, ",") + `]}`
	res := resultOf(200, []byte(out), ModelRoute{Table: "results"})
	for _, c := range res.Columns {
		if strings.Contains(c, "nearest_compounds") {
			t.Fatalf("result table column %s", c)
		}
	}
	if len(res.Rows) != maxNearestRows+20 || len(res.Nearest) != 3*maxNearestRows || !res.NearestMore {
		t.Fatalf("%d rows, %d nearest, more %v", len(res.Rows), len(res.Nearest), res.NearestMore)
	}
	want := []nearestRow{{"C0", "a", "CCN", "0.5", "a: inactive; y: x"}, {"C0", "a", "c1ccccc1", "0.25", ""}, {"C0", "b", "CCO", "0.5", "active"}}
	for i, w := range want {
		if res.Nearest[i] != w {
			t.Errorf("nearest %d: %+v, want %+v", i, res.Nearest[i], w)
		}
	}
	if !strings.Contains(res.JSON, "nearest_compounds") {
		t.Errorf("the JSON answer lost the nearest compounds")
	}
}
