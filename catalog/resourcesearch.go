package catalog

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"toxgate/catalog/ckan"
)

func init() {
	register("resource_search", true, "Resources of public datasets whose fields match (query \"field:term\" or a list, order_by, offset, limit).", resourceSearch)
}

// resourceSearchFields are the fields resource_search matches (CKAN's
// CORE_RESOURCE_COLUMNS; ckan.extra_resource_fields is empty here).
var resourceSearchFields = map[string]bool{
	"url": true, "format": true, "description": true, "hash": true, "name": true, "resource_type": true,
	"mimetype": true, "mimetype_inner": true, "size": true, "created": true, "last_modified": true,
	"metadata_modified": true, "cache_url": true, "cache_last_updated": true, "url_type": true,
}

// resourceDateFields match by equal time, size by equal number, the rest
// by case-insensitive substring (hash: prefix).
var resourceDateFields = map[string]bool{"created": true, "last_modified": true, "metadata_modified": true, "cache_last_updated": true}

// resourceOrderFields are the columns of CKAN's Resource model order_by takes.
var resourceOrderFields = map[string]bool{"id": true, "package_id": true, "position": true, "state": true}

// resourceField is the stored value of field of r for ordering: a
// string, an int64 (size, position) or nil.
func resourceField(d *Dataset, r *Resource, pos int, field string) any {
	switch field {
	case "id":
		return r.ID
	case "package_id":
		return d.ID
	case "position":
		return int64(pos)
	case "state":
		return r.State
	case "size":
		if r.Size == nil {
			return nil
		}
		return *r.Size
	}
	if s, ok := resourceText(r, field); ok {
		return s
	}
	return nil
}

// resourceText is the value of a text or date field of r (ok is false
// when it is null).
func resourceText(r *Resource, field string) (string, bool) {
	opt := func(p *string) (string, bool) {
		if p == nil {
			return "", false
		}
		return *p, true
	}
	switch field {
	case "url":
		return r.URL, true
	case "format":
		return r.Format, true
	case "hash":
		return r.Hash, true
	case "created":
		return r.Created, true
	case "metadata_modified":
		return r.MetadataModified, true
	case "description":
		return opt(r.Description)
	case "name":
		return opt(r.Name)
	case "resource_type":
		return opt(r.ResourceType)
	case "mimetype":
		return opt(r.Mimetype)
	case "mimetype_inner":
		return opt(r.MimetypeInner)
	case "last_modified":
		return opt(r.LastModified)
	case "cache_url":
		return opt(r.CacheURL)
	case "cache_last_updated":
		return opt(r.CacheLastUpdated)
	case "url_type":
		return opt(r.URLType)
	}
	return "", false
}

// resourceTerm is one field:term criterion.
type resourceTerm struct {
	field, term string
	lower       string // term in lower case
	size        int64
	at          string // a date term, as ckanTime formats it
}

func (t resourceTerm) matches(r *Resource) bool {
	if t.field == "size" {
		return r.Size != nil && *r.Size == t.size
	}
	s, ok := resourceText(r, t.field)
	switch {
	case !ok:
		return false
	case resourceDateFields[t.field]:
		parsed, ok := parseISO(s)
		return ok && ckanTime(parsed) == t.at
	case t.field == "hash":
		return len(s) >= len(t.lower) && containsFold(s[:len(t.lower)], t.lower)
	}
	return containsFold(s, t.lower)
}

// containsFold reports whether s contains lowerSub (in lower case),
// ignoring case, without allocating for ASCII s.
func containsFold(s, lowerSub string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), lowerSub)
		}
	}
	n := len(lowerSub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerSub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// parseResourceQuery reads query: "field:term" or a list of them, ANDed.
func parseResourceQuery(v any) ([]resourceTerm, *ckan.Error) {
	var pairs []string
	switch x := v.(type) {
	case nil:
		return nil, ckan.Validation(map[string]any{"query": ckan.MsgMissing})
	case string:
		pairs = []string{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, ckan.Validation(map[string]any{"query": "Must be <field>:<value> pair(s)"})
			}
			pairs = append(pairs, s)
		}
	default:
		return nil, ckan.Validation(map[string]any{"query": "Must be <field>:<value> pair(s)"})
	}
	byField := map[string]string{}
	var order []string
	for _, p := range pairs {
		field, term, ok := strings.Cut(p, ":")
		if !ok {
			return nil, ckan.Validation(map[string]any{"query": "Must be <field>:<value> pair(s)"})
		}
		if _, seen := byField[field]; !seen {
			order = append(order, field)
		}
		byField[field] = term // a repeated field: the last term counts, as in CKAN
	}
	terms := make([]resourceTerm, 0, len(order))
	for _, field := range order {
		t := resourceTerm{field: field, term: byField[field], lower: strings.ToLower(byField[field])}
		if !resourceSearchFields[field] {
			return nil, ckan.Validation(map[string]any{"query": fmt.Sprintf("Field \"%s\" not recognised in resource_search.", field)})
		}
		switch {
		case field == "size":
			n, err := strconv.ParseInt(strings.TrimSpace(t.term), 10, 64)
			if err != nil {
				return nil, ckan.Validation(map[string]any{"query": fmt.Sprintf("Field \"size\" takes a whole number of bytes, not %q", t.term)})
			}
			t.size = n
		case resourceDateFields[field]:
			at, ok := parseISO(strings.TrimSpace(t.term))
			if !ok {
				return nil, ckan.Validation(map[string]any{"query": fmt.Sprintf("Field \"%s\" takes an ISO 8601 date, not %q", field, t.term)})
			}
			t.at = ckanTime(at)
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// compareResourceValues orders values ascending with nil last (as
// PostgreSQL does).
func compareResourceValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	if x, ok := a.(int64); ok {
		y, _ := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func resourceSearch(_ context.Context, s *Service, r *Request) (any, error) {
	terms, verr := parseResourceQuery(r.Data["query"])
	if verr != nil {
		return nil, verr
	}
	orderBy := ckan.String(r.Data, "order_by")
	if orderBy != "" && !resourceSearchFields[orderBy] && !resourceOrderFields[orderBy] {
		return nil, ckan.FieldError("order_by", fmt.Sprintf("Cannot sort by field `%s`", orderBy))
	}
	offset, err := ckan.Natural(r.Data, "offset", 0)
	if err != nil {
		return nil, err
	}
	limit, err := ckan.Natural(r.Data, "limit", -1)
	if err != nil {
		return nil, err
	}
	type hit struct {
		d   *Dataset
		r   *Resource
		pos int
	}
	var hits []hit
	return viewed2(s.st, func() (any, error) {
		for _, d := range s.st.datasets {
			if d.State != StateActive || d.Private {
				continue
			}
			pos := 0
			for i := range d.Resources {
				res := &d.Resources[i]
				if res.State == StateDeleted {
					continue
				}
				ok := true
				for _, t := range terms {
					if !t.matches(res) {
						ok = false
						break
					}
				}
				if ok {
					hits = append(hits, hit{d, res, pos})
				}
				pos++
			}
		}
		sort.Slice(hits, func(i, j int) bool {
			a, b := hits[i], hits[j]
			if orderBy != "" {
				if c := compareResourceValues(resourceField(a.d, a.r, a.pos, orderBy), resourceField(b.d, b.r, b.pos, orderBy)); c != 0 {
					return c < 0
				}
			}
			// otherwise (and among equals) the oldest first, as stored
			if a.r.Created != b.r.Created {
				return a.r.Created < b.r.Created
			}
			return a.r.ID < b.r.ID
		})
		count := len(hits)
		hits = hits[min(offset, len(hits)):]
		if limit >= 0 && limit < len(hits) {
			hits = hits[:limit]
		}
		results := make([]map[string]any, len(hits))
		for i, h := range hits {
			results[i] = resourceDict(h.d, h.r, h.pos, r.SiteURL)
		}
		return map[string]any{"count": count, "results": results}, nil
	})
}
