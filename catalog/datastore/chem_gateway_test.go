package datastore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"
)

// resolve asks GET /chem/resolve?q= and returns the status and body.
func (s *site) resolve(q string) (int, map[string]any) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, body, err := s.g.Do(ctx, http.MethodGet, "/chem/resolve?q="+url.QueryEscape(q), nil, nil)
	if err != nil {
		s.t.Fatalf("resolve %q: %v", q, err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		s.t.Fatalf("resolve %q: %d %s", q, resp.StatusCode, body)
	}
	return resp.StatusCode, out
}

// firstCompound is the first compound of a resolution.
func firstCompound(t *testing.T, q string, out map[string]any) map[string]any {
	t.Helper()
	l, _ := out["compounds"].([]any)
	if len(l) == 0 {
		t.Fatalf("%q: no compound: %v", q, out)
	}
	return l[0].(map[string]any)
}

// TestChemResolveGateway resolves names, synonyms, CAS numbers (a wrong
// check digit refused with 400), DTXSIDs, SMILES and, from a DataStore
// table a sysadmin registers as a compound dictionary, InChIKeys.
func TestChemResolveGateway(t *testing.T) {
	s := newSite(t, nil)
	for _, c := range []struct{ q, dtxsid, by string }{
		{"Aspirin", "DTXSID5020108", "preferred_name"},
		{"paracetamol", "DTXSID2020006", "synonym"},
		{"50-78-2", "DTXSID5020108", "cas"},
		{"DTXSID0020232", "DTXSID0020232", "dtxsid"},
		{"OC(=O)c1ccccc1OC(C)=O", "DTXSID5020108", "structure"},
	} {
		code, out := s.resolve(c.q)
		if code != 200 {
			t.Fatalf("%q: %d %v", c.q, code, out)
		}
		comp := firstCompound(t, c.q, out)
		if comp["dtxsid"] != c.dtxsid || comp["matched_by"] != c.by {
			t.Errorf("%q: %v by %v, want %s by %s", c.q, comp["dtxsid"], comp["matched_by"], c.dtxsid, c.by)
		}
		st, _ := out["structure"].(map[string]any)
		if st == nil || st["standardized_smiles"] == "" || st["structure_key"] == "" {
			t.Errorf("%q: no structure: %v", c.q, out)
		}
		if src, _ := comp["sources"].(map[string]any); src["dtxsid"] == nil {
			t.Errorf("%q: no sources: %v", c.q, comp)
		}
	}
	code, out := s.resolve("50-78-3")
	if e, _ := out["error"].(map[string]any); code != 400 || e == nil || !strings.Contains(e["message"].(string), "check digit") {
		t.Fatalf("wrong check digit: %d %v", code, out)
	}
	if code, _ := s.resolve(strings.Repeat("C", 3000)); code != 400 {
		t.Fatalf("long query: %d", code)
	}
	code, out = s.resolve("aspirine")
	if sug, _ := out["suggestions"].([]any); code != 200 || len(sug) == 0 || sug[0].(map[string]any)["name"] != "aspirin" {
		t.Fatalf("did you mean: %d %v", code, out)
	}

	// a dictionary table, registered by a sysadmin only
	s.ok(s.admin, "package_create", map[string]any{"name": "dict", "owner_org": "lab"})
	res := s.ok(s.admin, "datastore_create", map[string]any{"resource": map[string]any{"package_id": "dict", "name": "compounds"},
		"records": []any{map[string]any{"name": "Testazole", "inchikey": "ZZZZZZZZZZZZZZ-YYYYYYYYYY-N", "smiles": "c1ccc2[nH]ccc2c1", "synonyms": "tz-9|testazol"}}})
	rid := res["resource_id"].(string)
	if code, _ := s.call(s.tok["eddie"], "compound_dictionary_register", map[string]any{"resource_id": rid}); code != 403 {
		t.Fatalf("an editor registered a dictionary: %d", code)
	}
	s.ok(s.admin, "compound_dictionary_register", map[string]any{"resource_id": rid})
	for _, q := range []string{"ZZZZZZZZZZZZZZ-YYYYYYYYYY-N", "testazol", "Testazole"} {
		code, out := s.resolve(q)
		if code != 200 {
			t.Fatalf("%q: %d %v", q, code, out)
		}
		comp := firstCompound(t, q, out)
		if comp["preferred_name"] != "Testazole" || comp["sources"].(map[string]any)["inchikey"] != "datastore:"+rid {
			t.Fatalf("%q: %v", q, comp)
		}
	}
	// rows written to the dictionary are read by the next resolution
	s.ok(s.admin, "datastore_upsert", map[string]any{"resource_id": rid, "method": "insert",
		"records": []any{map[string]any{"name": "Probenol", "inchikey": "", "smiles": "CCO", "synonyms": ""}}})
	if code, out := s.resolve("probenol"); code != 200 || firstCompound(t, "probenol", out)["preferred_name"] != "Probenol" {
		t.Fatalf("upserted dictionary row: %d %v", code, out)
	}
}

// hits runs structure_search as token and returns its results.
func (s *site) hits(token string, args map[string]any) (int, []map[string]any, map[string]any) {
	s.t.Helper()
	code, out := s.call(token, "structure_search", args)
	r, _ := out["result"].(map[string]any)
	var l []map[string]any
	if r != nil {
		for _, h := range r["results"].([]any) {
			l = append(l, h.(map[string]any))
		}
	}
	return code, l, out
}

// TestStructureSearchGateway indexes tables of several datasets, one
// private, and searches them exactly and by similarity, as a member and
// anonymously, before and after an upsert and a delete.
func TestStructureSearchGateway(t *testing.T) {
	engines(t, func(t *testing.T, env []string) {
		s := newSite(t, env)
		s.ok(s.admin, "package_create", map[string]any{"name": "pub-a", "owner_org": "lab"})
		s.ok(s.admin, "package_create", map[string]any{"name": "pub-b", "owner_org": "lab"})
		s.ok(s.admin, "package_create", map[string]any{"name": "secret", "owner_org": "lab", "private": true})
		mk := func(pkg string, fields []any, recs []any) string {
			data := map[string]any{"resource": map[string]any{"package_id": pkg}, "records": recs}
			if fields != nil {
				data["fields"] = fields
			}
			return s.ok(s.tok["eddie"], "datastore_create", data)["resource_id"].(string)
		}
		// detected by name
		a := mk("pub-a", nil, []any{
			map[string]any{"compound": "aspirin", "SMILES": "CC(=O)Oc1ccccc1C(=O)O"},
			map[string]any{"compound": "salicylic acid", "SMILES": "OC(=O)c1ccccc1O"},
			map[string]any{"compound": "bad", "SMILES": "C1CC"},
		})
		// declared in the data dictionary
		b := mk("pub-b", []any{map[string]any{"id": "structure", "type": "text", "info": map[string]any{"structure": "smiles"}},
			map[string]any{"id": "y", "type": "int"}}, []any{
			map[string]any{"structure": "OC(=O)c1ccccc1OC(C)=O.[Na+]", "y": 1},
			map[string]any{"structure": "CCCCCCCCCC", "y": 0},
		})
		// detected by content, in a private dataset
		p := mk("secret", nil, []any{map[string]any{"mol": "CC(=O)Oc1ccccc1C(=O)O", "note": "hidden"}, map[string]any{"mol": "c1ccccc1C(=O)O", "note": "x"}})
		// no structures
		mk("pub-b", nil, []any{map[string]any{"word": "hello", "n": 1}})

		exact := map[string]any{"smiles": "aspirin", "mode": "exact"}
		where := func(l []map[string]any) map[string]int {
			m := map[string]int{}
			for _, h := range l {
				m[h["resource_id"].(string)]++
			}
			return m
		}
		code, l, out := s.hits(s.tok["molly"], exact)
		if m := where(l); code != 200 || m[a] != 1 || m[b] != 1 || m[p] != 1 || len(l) != 3 {
			t.Fatalf("member exact: %d %v", code, out)
		}
		for _, h := range l {
			if h["similarity"] != 1.0 || h["package_name"] == "" {
				t.Fatalf("hit %v", h)
			}
		}
		// anonymous and outsider callers do not see the private table
		for _, tok := range []string{"", s.tok["olga"]} {
			code, l, out = s.hits(tok, exact)
			if m := where(l); code != 200 || m[p] != 0 || len(l) != 2 {
				t.Fatalf("caller %q exact: %d %v", tok, code, out)
			}
			code, l, out = s.hits(tok, map[string]any{"smiles": "c1ccccc1C(=O)O", "mode": "similarity", "threshold": 0.05, "limit": 100})
			if m := where(l); code != 200 || m[p] != 0 {
				t.Fatalf("caller %q similarity: %d %v", tok, code, out)
			}
			if r := out["result"].(map[string]any); r["count"].(float64) != float64(len(l)) {
				t.Fatalf("count %v for %d hits", r["count"], len(l))
			}
		}
		// package_search narrowed to datasets holding a compound like aspirin
		names := func(token string, data map[string]any) []string {
			r := s.ok(token, "package_search", data)
			var l []string
			for _, d := range r["results"].([]any) {
				l = append(l, d.(map[string]any)["name"].(string))
			}
			sort.Strings(l)
			return l
		}
		if got := names("", map[string]any{"fq": "structure:aspirin"}); strings.Join(got, ",") != "pub-a,pub-b" {
			t.Fatalf("anonymous package_search structure: %v", got)
		}
		if got := names(s.tok["molly"], map[string]any{"fq": `structure:"50-78-2"`, "include_private": true}); strings.Join(got, ",") != "pub-a,pub-b,secret" {
			t.Fatalf("member package_search structure: %v", got)
		}
		if got := names("", map[string]any{"fq": "structure:CCCCCCCCCC"}); strings.Join(got, ",") != "pub-b" {
			t.Fatalf("package_search decane: %v", got)
		}
		if code, out := s.call("", "package_search", map[string]any{"fq": "structure:50-78-3"}); code != 400 {
			t.Fatalf("package_search wrong CAS: %d %v", code, out)
		}
		// the dataset search page's structure box does the same
		page := func(query string) (int, string) {
			resp, body, err := s.g.Do(context.Background(), http.MethodGet, "/dataset?"+query, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, string(body)
		}
		if code, body := page("structure=aspirin"); code != 200 || !strings.Contains(body, `data-name="pub-a"`) ||
			!strings.Contains(body, `data-name="pub-b"`) || strings.Contains(body, `data-name="secret"`) || !strings.Contains(body, `id="structure-filter"`) {
			t.Fatalf("the search page with a structure: %d %.3000s", code, body)
		}
		if code, body := page("structure=50-78-3"); code != 200 || !strings.Contains(body, `id="structure-error"`) || strings.Contains(body, `class="dataset-item"`) {
			t.Fatalf("the search page with a wrong CAS: %d %.3000s", code, body)
		}
		// similarity: best first, the threshold holds
		code, l, out = s.hits("", map[string]any{"smiles": "50-78-2", "threshold": 0.3})
		if code != 200 || len(l) < 3 || l[0]["similarity"] != 1.0 || l[len(l)-1]["similarity"].(float64) < 0.3 {
			t.Fatalf("similarity by CAS: %d %v", code, out)
		}
		for i := 1; i < len(l); i++ {
			if l[i]["similarity"].(float64) > l[i-1]["similarity"].(float64) {
				t.Fatalf("not best first: %v", l)
			}
		}
		// after an upsert and a delete the answers follow
		s.ok(s.tok["eddie"], "datastore_upsert", map[string]any{"resource_id": b, "method": "insert",
			"records": []any{map[string]any{"structure": "CC(=O)Oc1ccccc1C(O)=O", "y": 2}}})
		if _, l, out = s.hits("", exact); where(l)[b] != 2 {
			t.Fatalf("after upsert: %v", out)
		}
		s.ok(s.tok["eddie"], "datastore_records_delete", map[string]any{"resource_id": a, "filters": map[string]any{"compound": "aspirin"}})
		if _, l, out = s.hits("", exact); where(l)[a] != 0 || where(l)[b] != 2 {
			t.Fatalf("after records delete: %v", out)
		}
		s.ok(s.tok["eddie"], "datastore_delete", map[string]any{"resource_id": b})
		if _, l, out = s.hits("", exact); len(l) != 0 {
			t.Fatalf("after table delete: %v", out)
		}
		// making the private dataset public shows its table
		s.ok(s.admin, "package_patch", map[string]any{"id": "secret", "private": false})
		if _, l, out = s.hits("", exact); where(l)[p] != 1 {
			t.Fatalf("after making public: %v", out)
		}
		// bad input: clear 409s, never 5xx
		for _, bad := range []map[string]any{
			{}, {"smiles": "C1CC"}, {"smiles": "aspirin", "mode": "nope"}, {"smiles": "aspirin", "threshold": 2},
			{"smiles": "aspirin", "limit": 100000}, {"smiles": "50-78-3"},
			{"smiles": strings.Repeat("C", 5000)},
		} {
			if code, out := s.call("", "structure_search", bad); code != 409 || out["success"] != false {
				t.Fatalf("%v: %d %v", bad, code, out)
			}
		}
	})
}

// TestSubstructureSearchGateway searches tables of several datasets, one
// private, by SMARTS (ring closures, aromatic against aliphatic, charges,
// ring bonds) and by a molecule or a name, as a member and anonymously,
// before and after an upsert and a delete; bad patterns are clear 409s.
func TestSubstructureSearchGateway(t *testing.T) {
	s := newSite(t, nil)
	s.ok(s.admin, "package_create", map[string]any{"name": "pub-a", "owner_org": "lab"})
	s.ok(s.admin, "package_create", map[string]any{"name": "secret", "owner_org": "lab", "private": true})
	mk := func(pkg string, recs []any) string {
		return s.ok(s.tok["eddie"], "datastore_create", map[string]any{"resource": map[string]any{"package_id": pkg}, "records": recs})["resource_id"].(string)
	}
	a := mk("pub-a", []any{
		map[string]any{"name": "toluene", "smiles": "Cc1ccccc1"},
		map[string]any{"name": "cyclohexane", "smiles": "C1CCCCC1"},
		map[string]any{"name": "hexane", "smiles": "CCCCCC"},
		map[string]any{"name": "nitrobenzene", "smiles": "O=[N+]([O-])c1ccccc1"},
	})
	p := mk("secret", []any{map[string]any{"name": "aspirin", "smiles": "CC(=O)Oc1ccccc1C(=O)O"}})
	names := func(token string, args map[string]any) []string {
		t.Helper()
		code, l, out := s.hits(token, args)
		if code != 200 {
			t.Fatalf("%v: %d %v", args, code, out)
		}
		var got []string
		for _, h := range l {
			where := "a"
			if h["resource_id"] == p {
				where = "p"
			}
			got = append(got, where+":"+h["smiles"].(string))
		}
		sort.Strings(got)
		if r := out["result"].(map[string]any); r["count"].(float64) != float64(len(l)) {
			t.Fatalf("%v: count %v for %d hits", args, r["count"], len(l))
		}
		return got
	}
	for _, c := range []struct {
		token string
		args  map[string]any
		want  string
	}{
		{s.tok["molly"], map[string]any{"smarts": "c1ccccc1"}, "a:Cc1ccccc1,a:O=[N+]([O-])c1ccccc1,p:CC(=O)Oc1ccccc1C(=O)O"},
		{"", map[string]any{"smarts": "c1ccccc1"}, "a:Cc1ccccc1,a:O=[N+]([O-])c1ccccc1"},
		{s.tok["olga"], map[string]any{"smarts": "c1ccccc1", "mode": "substructure"}, "a:Cc1ccccc1,a:O=[N+]([O-])c1ccccc1"},
		{"", map[string]any{"smarts": "C1CCCCC1"}, "a:C1CCCCC1"},
		{"", map[string]any{"smarts": "C@C"}, "a:C1CCCCC1"},
		{"", map[string]any{"smarts": "[N+](=O)[O-]"}, "a:O=[N+]([O-])c1ccccc1"},
		{"", map[string]any{"smiles": "benzene", "mode": "substructure"}, "a:Cc1ccccc1,a:O=[N+]([O-])c1ccccc1"},
		{"", map[string]any{"smiles": "C1=CC=CC=C1", "mode": "substructure"}, "a:Cc1ccccc1,a:O=[N+]([O-])c1ccccc1"},
		{"", map[string]any{"smiles": "[#6]1~[#6]~[#6]~[#6]~[#6]~[#6]~1", "mode": "substructure"}, "a:C1CCCCC1,a:Cc1ccccc1,a:O=[N+]([O-])c1ccccc1"},
		{s.tok["molly"], map[string]any{"smarts": "[$(C=O)]Oc"}, "p:CC(=O)Oc1ccccc1C(=O)O"},
	} {
		if got := strings.Join(names(c.token, c.args), ","); got != c.want {
			t.Errorf("%v: %s, want %s", c.args, got, c.want)
		}
	}
	// a molecule pattern ranks hits by similarity
	_, l, _ := s.hits("", map[string]any{"smiles": "c1ccccc1", "mode": "substructure"})
	if len(l) != 2 || l[0]["similarity"] == nil || l[0]["similarity"].(float64) < l[1]["similarity"].(float64) {
		t.Fatalf("molecule pattern: %v", l)
	}
	// answers follow an upsert and a delete
	s.ok(s.tok["eddie"], "datastore_upsert", map[string]any{"resource_id": a, "method": "insert",
		"records": []any{map[string]any{"name": "cyclopentane", "smiles": "C1CCCC1"}}})
	if got := strings.Join(names("", map[string]any{"smarts": "C@C"}), ","); got != "a:C1CCCC1,a:C1CCCCC1" {
		t.Fatalf("after upsert: %s", got)
	}
	s.ok(s.tok["eddie"], "datastore_records_delete", map[string]any{"resource_id": a, "filters": map[string]any{"name": "cyclohexane"}})
	if got := strings.Join(names("", map[string]any{"smarts": "C@C"}), ","); got != "a:C1CCCC1" {
		t.Fatalf("after delete: %s", got)
	}
	// bad input: clear 409s naming the field, never 5xx
	for _, bad := range []map[string]any{
		{"mode": "substructure"}, {"smarts": "C1CC"}, {"smarts": "[Q]"}, {"smarts": strings.Repeat("C", 3000)},
		{"smiles": "C1CC", "mode": "substructure"}, {"smiles": "50-78-3", "mode": "substructure"},
	} {
		code, out := s.call("", "structure_search", bad)
		e, _ := out["error"].(map[string]any)
		if code != 409 || out["success"] != false || e == nil {
			t.Fatalf("%v: %d %v", bad, code, out)
		}
	}
}
