package chemindex

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

var (
	resolverOnce sync.Once
	resolverVal  *Resolver
	resolverErr  error
)

func testResolver(t testing.TB) *Resolver {
	t.Helper()
	resolverOnce.Do(func() { resolverVal, resolverErr = NewResolver() })
	if resolverErr != nil {
		t.Fatal(resolverErr)
	}
	return resolverVal
}

func TestResolveIdentifiers(t *testing.T) {
	r := testResolver(t)
	cases := []struct {
		q, kind, matched, dtxsid string
	}{
		{"Acetaminophen", "name", "preferred_name", "DTXSID2020006"},
		{"  paracetamol ", "name", "synonym", "DTXSID2020006"},
		{"103-90-2", "cas", "cas", "DTXSID2020006"},
		{"dtxsid2020006", "dtxsid", "dtxsid", "DTXSID2020006"},
		{"CC(=O)Nc1ccc(O)cc1", "smiles", "structure", "DTXSID2020006"},
		{"CC(=O)Nc1ccc(O)cc1.Cl", "smiles", "structure", "DTXSID2020006"}, // salt stripped
		{"Oc1ccc(NC(C)=O)cc1", "smiles", "structure", "DTXSID2020006"},    // other atom order
		{"CAFFEINE", "name", "preferred_name", "DTXSID0020232"},
	}
	for _, c := range cases {
		res, err := r.Resolve(c.q)
		if err != nil {
			t.Fatalf("%q: %v", c.q, err)
		}
		if string(res.Kind) != c.kind || len(res.Compounds) == 0 {
			t.Fatalf("%q: kind %s, %d compounds", c.q, res.Kind, len(res.Compounds))
		}
		got := res.Compounds[0]
		if got.DTXSID != c.dtxsid || got.MatchedBy != c.matched {
			t.Errorf("%q: %s by %s, want %s by %s", c.q, got.DTXSID, got.MatchedBy, c.dtxsid, c.matched)
		}
		if res.Structure == nil || res.Structure.StructureKey == "" {
			t.Errorf("%q: no structure", c.q)
		}
		if got.Sources["smiles"] != "invitrodb" || len(res.Sources) == 0 {
			t.Errorf("%q: sources %v / %v", c.q, got.Sources, res.Sources)
		}
	}
	// a synonym comes from httk
	res, _ := r.Resolve("paracetamol")
	if res.Compounds[0].Sources["synonyms"] != "httk" {
		t.Errorf("synonyms source = %q", res.Compounds[0].Sources["synonyms"])
	}
}

func TestResolveWrongCASChecksum(t *testing.T) {
	r := testResolver(t)
	_, err := r.Resolve("103-90-3")
	var qe *QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Msg, "check digit") {
		t.Fatalf("err = %v, want a check digit error", err)
	}
	if _, err := CheckCAS("50-78-2"); err != nil {
		t.Fatal(err)
	}
}

func TestResolveSuggestions(t *testing.T) {
	r := testResolver(t)
	res, err := r.Resolve("acetaminofen")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Compounds) != 0 || len(res.Suggestions) == 0 || res.Suggestions[0].Name != "acetaminophen" {
		t.Fatalf("suggestions = %+v", res.Suggestions)
	}
	if _, _, err := r.ResolveStructure("acetaminofen"); err == nil || !strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("ResolveStructure err = %v", err)
	}
}

func TestResolveDictionary(t *testing.T) {
	r, err := NewResolver()
	if err != nil {
		t.Fatal(err)
	}
	cols := DictionaryColumnMap([]string{"Name", "InChIKey", "SMILES", "Synonyms"})
	c := DictionaryCompound(map[string]string{"Name": "Testamide", "InChIKey": "RZVAJINKPMORJF-UHFFFAOYSA-N", "SMILES": "CC(=O)Nc1ccc(O)cc1", "Synonyms": "tm-1|tm one"}, cols, "datastore:res1")
	r.SetDictionary(Source{ID: "datastore:res1", Title: "t"}, []*Compound{c})
	for _, q := range []string{"RZVAJINKPMORJF-UHFFFAOYSA-N", "tm one", "Testamide"} {
		res, err := r.Resolve(q)
		if err != nil || len(res.Compounds) == 0 || res.Compounds[0].Name != "Testamide" {
			t.Fatalf("%q: %+v %v", q, res, err)
		}
	}
	// the structure now names both compounds
	res, _ := r.Resolve("CC(=O)Nc1ccc(O)cc1")
	if len(res.Compounds) != 2 {
		t.Fatalf("%d compounds", len(res.Compounds))
	}
	r.RemoveDictionary("datastore:res1")
	if res, _ := r.Resolve("Testamide"); len(res.Compounds) != 0 {
		t.Fatal("dictionary still read after removal")
	}
}

func TestResolveBoundsAndJunk(t *testing.T) {
	r := testResolver(t)
	for _, q := range []string{"", "   ", strings.Repeat("C", MaxQueryLength+1)} {
		if _, err := r.Resolve(q); err == nil {
			t.Errorf("%.20q accepted", q)
		}
	}
	res, err := r.Resolve("zzqxv-not-a-thing")
	if err != nil || len(res.Compounds) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"aspirin", "50-78-2", "50-78-3", "DTXSID5020108", "RZVAJINKPMORJF-UHFFFAOYSA-N",
		"CC(=O)Oc1ccccc1C(=O)O", "C1CC1.[Na+]", "c1ccccc1)", "0000000-00-0", "\x00\xff", "[C@@H](Cl)(F)Br", "((((((C"} {
		f.Add(s)
	}
	r := testResolver(f)
	f.Fuzz(func(t *testing.T, q string) {
		res, err := r.Resolve(q)
		if err != nil {
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("%q: error of type %T: %v", q, err, err)
			}
			return
		}
		if res.Compounds == nil || res.Sources == nil {
			t.Fatalf("%q: nil lists", q)
		}
		if len(res.Suggestions) > maxSuggestions {
			t.Fatalf("%q: %d suggestions", q, len(res.Suggestions))
		}
	})
}

func FuzzCheckCAS(f *testing.F) {
	for _, s := range []string{"50-78-2", "50-78-3", "7732-18-5", "1-2-3", "1234567-89-0", "--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := CheckCAS(s); err == nil && !looksLikeCAS(s) {
			t.Fatalf("%q accepted", s)
		}
	})
}
