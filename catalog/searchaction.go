package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"toxgate/catalog/ckan"
	"toxgate/catalog/search"
)

func init() {
	register("package_search", true, "Search datasets (q, fq, sort, rows, start, facet.field, include_private).", packageSearch)
	register("tag_list", true, "Names of the tags in use (query).", tagList)
	register("license_list", true, "The licenses datasets may use.", licenseList)
	register("status_show", true, "Site and API version information.", statusShow)
	register("help_show", true, "The description of an action (name).", helpShow)
}

// rowsMax is ckan.search.rows_max.
const rowsMax = 1000

var searchParams = map[string]bool{
	"q": true, "fl": true, "fq": true, "fq_list": true, "rows": true, "sort": true, "start": true, "wt": true,
	"qf": true, "bf": true, "boost": true, "facet": true, "facet.mincount": true, "facet.limit": true,
	"facet.field": true, "extras": true, "tie": true, "defType": true, "mm": true, "df": true,
	"include_private": true, "include_drafts": true, "include_deleted": true, "use_default_schema": true,
}

func packageSearch(ctx context.Context, s *Service, r *Request) (any, error) {
	var bad []string
	for k := range r.Data {
		if !searchParams[k] && !strings.HasPrefix(k, "ext_") {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		quoted := make([]string, len(bad))
		for i, b := range bad {
			quoted[i] = "'" + b + "'"
		}
		return nil, ckan.SearchQueryError("Invalid search parameters: [" + strings.Join(quoted, ", ") + "]")
	}
	rows, err := ckan.Natural(r.Data, "rows", 10)
	if err != nil {
		return nil, err
	}
	rows = min(rows, rowsMax)
	start, err := ckan.Natural(r.Data, "start", 0)
	if err != nil {
		return nil, err
	}
	flag := func(k string) bool { v, _ := ckan.AsBool(r.Data[k]); return v }
	includePrivate, includeDrafts, includeDeleted := flag("include_private"), flag("include_drafts"), flag("include_deleted")
	filters := ckan.StringList(r.Data, "fq_list")
	fq := ckan.String(r.Data, "fq")
	filters = append(filters, fq)
	checkState := !strings.Contains(fq, "+state")
	var structures []string
	for i, f := range filters {
		if strings.Contains(f, structureFilterPrefix) {
			var vals []string
			filters[i], vals = cutStructureFilter(f)
			structures = append(structures, vals...)
		}
	}
	only, serr := s.structureDatasets(ctx, r.Caller, structures)
	if serr != nil {
		return nil, serr
	}

	q := ckan.String(r.Data, "q")
	sortSpec := ckan.String(r.Data, "sort")
	if strings.TrimSpace(sortSpec) == "" || sortSpec == "rank" {
		sortSpec = "score desc, metadata_modified desc"
	}
	query := search.Query{Q: q, Filters: filters, Sort: sortSpec, Start: start, Rows: rows, FacetLimit: 50, FacetMinCount: 1}
	if only != nil {
		query.Only = func(doc *search.Doc) bool {
			d, _ := doc.Ref.(*Dataset)
			return d != nil && only[d.ID]
		}
	}
	facetOn := true
	if v, ok := r.Data["facet"]; ok {
		facetOn, _ = ckan.AsBool(v)
	}
	if facetOn {
		query.FacetFields = facetFields(r.Data["facet.field"])
		if v, ok := r.Data["facet.limit"]; ok {
			n, msg := ckan.AsInt(v)
			if msg != "" {
				return nil, ckan.FieldError("facet.limit", msg)
			}
			query.FacetLimit = n
		}
		if v, ok := r.Data["facet.mincount"]; ok {
			n, msg := ckan.AsInt(v)
			if msg != "" {
				return nil, ckan.FieldError("facet.mincount", msg)
			}
			query.FacetMinCount = n
		}
	}
	c := r.Caller
	return viewed2(s.st, func() (any, error) {
		// Allow is asked only about documents not marked Public (docFor marks
		// active public datasets, which it accepts for every caller).
		query.Allow = func(doc *search.Doc) bool {
			d, _ := doc.Ref.(*Dataset)
			if d == nil {
				return false
			}
			if checkState {
				switch d.State {
				case StateActive:
				case StateDraft:
					if !includeDrafts {
						return false
					}
				case StateDeleted:
					if !includeDeleted {
						return false
					}
				}
			}
			if d.Private && !includePrivate {
				return false
			}
			return s.st.canRead(c, d)
		}
		// a caller with no account and no sysadmin right reads exactly the
		// Public documents (canRead: active and not private), whatever the
		// flags, so the public bits decide without asking Allow
		query.PublicOnly = !c.Sysadmin && c.UserID == ""
		res, serr := s.st.index.Search(query)
		var se *search.Error
		if errors.As(serr, &se) {
			return nil, ckan.SearchError(se.Message)
		}
		if serr != nil {
			return nil, serr
		}
		fl := ckan.StringList(r.Data, "fl")
		if len(fl) == 1 {
			fl = strings.FieldsFunc(fl[0], func(r rune) bool { return r == ',' || r == ' ' })
		}
		if len(fl) > 0 || searchGeneric {
			return s.st.searchMap(res, query.FacetFields, fl, sortSpec, r.SiteURL), nil
		}
		return s.st.searchJSON(res, query.FacetFields, sortSpec, r.SiteURL)
	})
}

// searchGeneric makes package_search build its reply as maps for
// encoding/json, as searchMap does; tests compare it with searchJSON.
var searchGeneric = false

// searchMap is package_search's reply as a map, each result a dataset
// dict or, with fl, the picked fields. Callers hold a lock.
func (st *readModel) searchMap(res search.Result, facetFields, fl []string, sortSpec, siteURL string) map[string]any {
	results := make([]any, 0, len(res.IDs))
	var keep map[string]bool
	if len(fl) > 0 {
		keep = make(map[string]bool, min(len(fl), 64))
		for _, f := range fl {
			keep[f] = true
		}
	}
	for _, id := range res.IDs {
		dict := st.datasetDict(st.datasets[id], siteURL)
		if keep != nil {
			results = append(results, pick(dict, keep))
		} else {
			results = append(results, dict)
		}
	}
	facets := map[string]map[string]int{}
	searchFacets := map[string]any{}
	for _, field := range facetFields {
		counts := map[string]int{}
		items := []map[string]any{}
		for _, f := range res.Facets[field] {
			counts[f.Value] = f.Count
			items = append(items, map[string]any{"name": f.Value, "display_name": st.facetDisplay(field, f.Value), "count": f.Count})
		}
		sort.SliceStable(items, func(i, j int) bool { return items[i]["display_name"].(string) > items[j]["display_name"].(string) })
		facets[field] = counts
		searchFacets[field] = map[string]any{"title": field, "items": items}
	}
	return map[string]any{"count": res.Count, "results": results, "facets": facets, "search_facets": searchFacets, "sort": sortSpec}
}

// searchJSON is searchMap without fl, encoded directly: the same bytes as
// ckan.Marshal(searchMap(...)) (maps' keys in sorted order), with each
// result's cached encoding (datasetJSON). Callers hold a lock.
func (st *readModel) searchJSON(res search.Result, facetFields []string, sortSpec, siteURL string) (ckan.RawJSONParts, error) {
	fields := slices.Clone(facetFields)
	slices.Sort(fields)
	fields = slices.Compact(fields)
	head := make([]byte, 0, 256+len(fields)*512)
	head = append(head, `{"count": `...)
	head = strconv.AppendInt(head, int64(res.Count), 10)
	head = append(head, `, "facets": {`...)
	for i, field := range fields {
		if i > 0 {
			head = append(head, ", "...)
		}
		head = ckan.AppendString(head, field)
		head = append(head, ": {"...)
		byValue := slices.Clone(res.Facets[field])
		slices.SortFunc(byValue, func(a, b search.Facet) int { return strings.Compare(a.Value, b.Value) })
		for j, f := range byValue {
			if j > 0 {
				head = append(head, ", "...)
			}
			head = ckan.AppendString(head, f.Value)
			head = append(head, ": "...)
			head = strconv.AppendInt(head, int64(f.Count), 10)
		}
		head = append(head, '}')
	}
	head = append(head, `}, "results": [`...)
	// the results are the datasets' cached encodings, not copied here
	parts := make(ckan.RawJSONParts, 0, 2*len(res.IDs)+2)
	parts = append(parts, head)
	for i, id := range res.IDs {
		b, err := st.datasetJSON(st.datasets[id], siteURL)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			parts = append(parts, commaSpace)
		}
		parts = append(parts, b)
	}
	tail := make([]byte, 0, 128+len(fields)*1024)
	tail = append(tail, `], "search_facets": {`...)
	type item struct {
		search.Facet
		display string
	}
	for i, field := range fields {
		if i > 0 {
			tail = append(tail, ", "...)
		}
		items := make([]item, len(res.Facets[field]))
		for j, f := range res.Facets[field] {
			items[j] = item{f, st.facetDisplay(field, f.Value)}
		}
		slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(b.display, a.display) })
		tail = ckan.AppendString(tail, field)
		tail = append(tail, `: {"items": [`...)
		for j, it := range items {
			if j > 0 {
				tail = append(tail, ", "...)
			}
			tail = append(tail, `{"count": `...)
			tail = strconv.AppendInt(tail, int64(it.Count), 10)
			tail = append(tail, `, "display_name": `...)
			tail = ckan.AppendString(tail, it.display)
			tail = append(tail, `, "name": `...)
			tail = ckan.AppendString(tail, it.Value)
			tail = append(tail, '}')
		}
		tail = append(tail, `], "title": `...)
		tail = ckan.AppendString(tail, field)
		tail = append(tail, '}')
	}
	tail = append(tail, `}, "sort": `...)
	tail = ckan.AppendString(tail, sortSpec)
	return append(parts, append(tail, '}')), nil
}

// commaSpace separates list items as ckan.Marshal does. Never modified.
var commaSpace = []byte(", ")

// facetFields reads facet.field: a JSON list (often sent as a string).
func facetFields(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if list, ok := plainStringList(x); ok {
			return list
		}
		var list []string
		if err := json.Unmarshal([]byte(x), &list); err == nil {
			return list
		}
		if x != "" {
			return []string{x}
		}
	case []any:
		out := []string{}
		for _, e := range x {
			if s, ok := e.(string); ok {
				// a repeated query key may itself hold a JSON list
				var list []string
				if json.Unmarshal([]byte(s), &list) == nil {
					out = append(out, list...)
				} else {
					out = append(out, s)
				}
			}
		}
		return out
	}
	return nil
}

// plainStringList reads a JSON list of strings without escapes, such as
// ["tags","organization"], as json.Unmarshal would; ok is false for
// anything else (left to json.Unmarshal).
func plainStringList(s string) (list []string, ok bool) {
	s = strings.Trim(s, jsonSpace)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	rest := strings.Trim(s[1:len(s)-1], jsonSpace)
	list = []string{}
	for rest != "" {
		if rest[0] != '"' {
			return nil, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			return nil, false
		}
		v := rest[1 : 1+end]
		for i := 0; i < len(v); i++ {
			if c := v[i]; c == '\\' || c < 0x20 || c >= 0x80 {
				return nil, false
			}
		}
		list = append(list, v)
		rest = strings.Trim(rest[2+end:], jsonSpace)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, false
		}
		rest = strings.Trim(rest[1:], jsonSpace)
		if rest == "" {
			return nil, false
		}
	}
	return list, true
}

// jsonSpace is JSON's white space.
const jsonSpace = " \t\n\r"

// facetDisplay is a facet item's display_name: org title, license title, or
// the value. Callers hold a lock.
func (st *readModel) facetDisplay(field, value string) string {
	switch field {
	case "organization":
		if o := st.org(value); o != nil && strings.TrimSpace(o.Title) != "" {
			return o.Title
		}
	case "groups":
		if g := st.lookupGroup(grpKind, value); g != nil && strings.TrimSpace(g.Title) != "" {
			return g.Title
		}
	case "license_id":
		if l := licenseByID[value]; l != nil {
			return l.Title
		}
	}
	return value
}

// pick keeps only the keep fields (fl) of a dataset dict: it looks at the
// dict's keys, so each result costs the same however long fl is.
func pick(d *DatasetDict, keep map[string]bool) map[string]any {
	b, _ := json.Marshal(d)
	var all map[string]any
	if json.Unmarshal(b, &all) != nil || all == nil {
		return map[string]any{}
	}
	for k := range all {
		if !keep[k] {
			delete(all, k)
		}
	}
	return all
}

func tagList(_ context.Context, s *Service, r *Request) (any, error) {
	q := ckan.String(r.Data, "query")
	if q == "" {
		q = ckan.String(r.Data, "q")
	}
	q = strings.ToLower(q)
	allFields, _ := ckan.AsBool(r.Data["all_fields"])
	if vocab := ckan.String(r.Data, "vocabulary_id"); vocab != "" {
		return vocabTagList(s, vocab, q, allFields)
	}
	seen := map[string]bool{}
	s.st.view(func() {
		for _, d := range s.st.datasets {
			if d.State != StateActive || !s.st.canRead(r.Caller, d) {
				continue
			}
			for _, t := range d.Tags {
				if q == "" || strings.Contains(strings.ToLower(t), q) {
					seen[t] = true
				}
			}
		}
	})
	names := make([]string, 0, len(seen))
	for t := range seen {
		names = append(names, t)
	}
	sort.Strings(names)
	if !allFields {
		return names, nil
	}
	out := make([]tagDict, len(names))
	for i, t := range names {
		out[i] = tagDict{DisplayName: t, ID: nameUUID(t), Name: t, State: StateActive}
	}
	return out, nil
}

func licenseList(context.Context, *Service, *Request) (any, error) { return Licenses, nil }

// CKANVersion is the CKAN API version the catalog follows.
const CKANVersion = "2.11.5"

func statusShow(_ context.Context, s *Service, r *Request) (any, error) {
	return map[string]any{
		"site_title": s.opts.SiteTitle, "site_description": s.opts.SiteDescription, "site_url": strings.TrimSuffix(r.SiteURL, "/"),
		"error_emails_to": nil, "locale_default": "en", "extensions": []string{"toxgate_catalog"},
		"ckan_version": CKANVersion, "toxgate_version": s.opts.Version,
	}, nil
}

func helpShow(_ context.Context, _ *Service, r *Request) (any, error) {
	name, _ := str(r.Data["name"])
	if name == "" {
		return nil, ckan.FieldError("name", ckan.MsgMissing)
	}
	a, ok := actions[name]
	if !ok {
		return nil, ckan.NotFound(fmt.Sprintf("Action function not found: %s", name))
	}
	return a.Description, nil
}
