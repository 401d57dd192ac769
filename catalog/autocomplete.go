package catalog

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"toxgate/catalog/ckan"
	"toxgate/catalog/search"
)

func init() {
	register("package_autocomplete", true, "Datasets whose name or title contains a string (q, limit).", packageAutocomplete)
	register("format_autocomplete", true, "Resource formats containing a string, most used first (q, limit).", formatAutocomplete)
	register("organization_autocomplete", true, "Organizations whose name or title contains a string (q, limit).", organizationAutocomplete)
	register("group_autocomplete", true, "Groups whose name or title contains a string (q, limit).", groupAutocomplete)
	register("group_package_show", true, "The public datasets of a group, most recently modified first (id, limit).", groupPackageShow)
	register("current_package_list_with_resources", true, "Datasets with their resources, most recently modified first (limit, offset).", currentPackageListWithResources)
}

// autocompleteArgs reads CKAN's default_autocomplete_schema: q (present,
// may be empty) and limit (a natural number, def when absent).
func autocompleteArgs(data map[string]any, def int) (string, int, *ckan.Error) {
	v, ok := data["q"]
	if !ok || v == nil {
		return "", 0, ckan.FieldError("q", ckan.MsgMissing)
	}
	q, _ := str(v)
	limit, err := ckan.Natural(data, "limit", def)
	if err != nil {
		return "", 0, err
	}
	return q, limit, nil
}

func packageAutocomplete(_ context.Context, s *Service, r *Request) (any, error) {
	q, limit, verr := autocompleteArgs(r.Data, 10)
	if verr != nil {
		return nil, verr
	}
	ql := strings.ToLower(strings.TrimSpace(q))
	type hit struct {
		d    *Dataset
		rank int // 0: name starts with q, 1: name contains it, 2: title contains it
	}
	var hits []hit
	s.st.view(func() {
		for _, d := range s.st.datasets {
			if d.State != StateActive || ql == "" {
				continue
			}
			rank := -1
			switch {
			case len(d.Name) >= len(ql) && containsFold(d.Name[:len(ql)], ql):
				rank = 0
			case containsFold(d.Name, ql):
				rank = 1
			case containsFold(d.Title, ql):
				rank = 2
			}
			if rank >= 0 && s.st.canRead(r.Caller, d) {
				hits = append(hits, hit{d, rank})
			}
		}
	})
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].rank != hits[j].rank {
			return hits[i].rank < hits[j].rank
		}
		return hits[i].d.Name < hits[j].d.Name
	})
	if limit < len(hits) {
		hits = hits[:limit]
	}
	out := make([]map[string]any, len(hits))
	for i, h := range hits {
		m := map[string]any{"name": h.d.Name, "title": h.d.Title, "match_field": "name", "match_displayed": h.d.Name}
		if !strings.Contains(h.d.Name, strings.ToLower(q)) {
			m["match_field"], m["match_displayed"] = "title", fmt.Sprintf("%s (%s)", h.d.Title, h.d.Name)
		}
		out[i] = m
	}
	return out, nil
}

func formatAutocomplete(_ context.Context, s *Service, r *Request) (any, error) {
	q, limit, verr := autocompleteArgs(r.Data, 5)
	if verr != nil {
		return nil, verr
	}
	ql := strings.ToLower(q)
	exact := map[string]int{}
	s.st.view(func() {
		for _, d := range s.st.datasets {
			// formats of the active datasets the caller may read, counted so
			if d.State != StateActive || !s.st.canRead(r.Caller, d) {
				continue
			}
			for i := range d.Resources {
				res := &d.Resources[i]
				if res.State == StateActive && res.Format != "" && containsFold(res.Format, ql) {
					exact[res.Format]++
				}
			}
		}
	})
	counts := map[string]int{}
	for f, n := range exact {
		counts[strings.ToLower(f)] += n
	}
	formats := make([]string, 0, len(counts))
	for f := range counts {
		formats = append(formats, f)
	}
	sort.Slice(formats, func(i, j int) bool {
		if counts[formats[i]] != counts[formats[j]] {
			return counts[formats[i]] > counts[formats[j]]
		}
		return formats[i] < formats[j]
	})
	if limit < len(formats) {
		formats = formats[:limit]
	}
	return formats, nil
}

func groupPackageShow(_ context.Context, s *Service, r *Request) (any, error) {
	ref, _ := str(r.Data["id"])
	if ref == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	limit := 0
	if v, ok := r.Data["limit"]; ok && v != nil && v != "" {
		n, msg := ckan.AsInt(v)
		if msg != "" || n < 0 {
			return nil, ckan.Validation(map[string]any{"message": "Limit must be a positive integer"})
		}
		limit = n
	}
	if limit == 0 {
		limit = 10 // package_search's default rows, as in CKAN
	}
	return viewed2(s.st, func() (any, error) {
		g := s.st.groupByAnyName(ref)
		if g == nil {
			return nil, ckan.NotFound("")
		}
		// as CKAN: package_search with fq=groups:NAME, public datasets only
		return s.st.listJSON(search.Query{Filters: []string{"groups:" + strconv.Quote(g.Name)}, Sort: "metadata_modified desc",
			Rows: min(limit, rowsMax), Allow: func(*search.Doc) bool { return false }}, r.SiteURL)
	})
}

// listJSON runs query and encodes its datasets as a list of package_show
// dicts (each from its cached encoding). Callers hold a lock.
func (st *readModel) listJSON(query search.Query, siteURL string) (ckan.RawJSONParts, error) {
	res, err := st.index.Search(query)
	if err != nil {
		return nil, err
	}
	parts := make(ckan.RawJSONParts, 0, 2*len(res.IDs)+1)
	parts = append(parts, []byte("["))
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
	return append(parts, []byte("]")), nil
}

func currentPackageListWithResources(_ context.Context, s *Service, r *Request) (any, error) {
	limit, err := ckan.Natural(r.Data, "limit", 0)
	if err != nil {
		return nil, err
	}
	offset, err := ckan.Natural(r.Data, "offset", 0)
	if err != nil {
		return nil, err
	}
	if _, given := r.Data["offset"]; !given && limit > 0 {
		// page is deprecated in CKAN but still read when offset is absent
		page, perr := ckan.Natural(r.Data, "page", 1)
		if perr != nil {
			return nil, perr
		}
		offset = max(page-1, 0) * limit
	}
	if limit == 0 {
		limit = 10 // package_search's default rows, as in CKAN
	}
	limit = min(limit, rowsMax)
	c := r.Caller
	return viewed2(s.st, func() (any, error) {
		return s.st.listJSON(search.Query{Sort: "metadata_modified desc", Start: offset, Rows: limit,
			Allow: func(doc *search.Doc) bool {
				d, _ := doc.Ref.(*Dataset)
				// as CKAN: private datasets for sysadmins only
				return d != nil && d.State == StateActive && (!d.Private || c.Sysadmin)
			}}, r.SiteURL)
	})
}

func organizationAutocomplete(_ context.Context, s *Service, r *Request) (any, error) {
	return s.groupAutocomplete(r, orgKind)
}

func groupAutocomplete(_ context.Context, s *Service, r *Request) (any, error) {
	return s.groupAutocomplete(r, grpKind)
}

// groupAutocomplete is CKAN's _group_or_org_autocomplete: active
// organizations or groups whose name or title contains q, by title.
func (s *Service) groupAutocomplete(r *Request, k groupKind) (any, error) {
	q, limit, verr := autocompleteArgs(r.Data, 20)
	if verr != nil {
		return nil, verr
	}
	ql := strings.ToLower(strings.TrimSpace(q))
	var found []*Organization
	s.st.view(func() {
		for _, o := range s.st.groupsOf(k) {
			if o.State == StateActive && (strings.Contains(o.Name, ql) || strings.Contains(strings.ToLower(o.Title), ql)) {
				found = append(found, o)
			}
		}
	})
	sort.Slice(found, func(i, j int) bool {
		if a, b := strings.ToLower(found[i].Title), strings.ToLower(found[j].Title); a != b {
			return a < b
		}
		return found[i].Name < found[j].Name
	})
	if limit < len(found) {
		found = found[:limit]
	}
	out := make([]map[string]any, len(found))
	for i, o := range found {
		out[i] = map[string]any{"id": o.ID, "name": o.Name, "title": o.Title}
	}
	return out, nil
}
