package jobs

import (
	"encoding/json"
	"testing"

	"toxgate/gateway/catalogclient"
)

// TestWithResolution checks that the resolution follows the model's
// members in order, that an empty object and an error row take it, and
// that a non-object answer stays as it is.
func TestWithResolution(t *testing.T) {
	r := &resolution{SMILES: "CCO", MatchedBy: "cas", DTXSID: "DTXSID9020584", Sources: map[string]string{"smiles": "invitrodb", "cas": "httk"}}
	got := withResolution(`{"prediction":"blocker","p":0.9}`, r)
	want := `{"prediction":"blocker","p":0.9,"resolved_smiles":"CCO","resolved_by":"cas","resolved_dtxsid":"DTXSID9020584","resolved_sources":"smiles=invitrodb cas=httk"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for _, in := range []string{"{}", rowError("bad")} {
		var m map[string]any
		if err := json.Unmarshal([]byte(withResolution(in, r)), &m); err != nil || m["resolved_smiles"] != "CCO" {
			t.Fatalf("%s: %v %v", in, m, err)
		}
	}
	if got := withResolution(`[1]`, r); got != `[1]` {
		t.Fatalf("non-object: %s", got)
	}
}

// TestRefusedItem reads compound_resolve's refusal of one list item.
func TestRefusedItem(t *testing.T) {
	err := &catalogclient.Error{Status: 409, Fields: map[string][]string{"q": {"item 3: CAS number 50-78-3: check digit should be 2"}}}
	if k, msg, ok := refusedItem(err); !ok || k != 2 || msg != "CAS number 50-78-3: check digit should be 2" {
		t.Fatalf("%d %q %v", k, msg, ok)
	}
	for _, e := range []error{
		&catalogclient.Error{Status: 409, Fields: map[string][]string{"q": {"20000 items, at most 10000"}}},
		&catalogclient.Error{Status: 500},
	} {
		if _, _, ok := refusedItem(e); ok {
			t.Fatalf("%v read as an item refusal", e)
		}
	}
}
