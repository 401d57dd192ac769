package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"toxgate/catalog/ckan"
)

func init() {
	register("package_revise", false, "Change a dataset only if it matches (match, filter, update, include; flattened keys match__*, update__*).", packageRevise)
}

// reviseParams are package_revise's parameters after CKAN's
// package_revise_schema: match and update dicts, filter and include
// lists of glob patterns, and the flattened match__* and update__* keys.
type reviseParams struct {
	match, update         map[string]any
	filter, include       []string
	hasFilter, hasInclude bool
	matchSet, updateSet   bool
	matchKeys, updKeys    map[string]any
}

// decodeJSON decodes s when it is one JSON value.
func decodeJSON(s string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return nil, false
	}
	return out, true
}

// jsonOrString is CKAN's json_or_string: a string holding JSON is decoded.
func jsonOrString(v any) any {
	if s, ok := v.(string); ok {
		if d, ok := decodeJSON(s); ok {
			return d
		}
	}
	return v
}

// globList is CKAN's json_list_or_string then list_of_strings.
func globList(v any) ([]string, string) {
	if s, ok := v.(string); ok {
		if d, ok := decodeJSON(s); ok {
			v = d
		} else {
			v = toAnyList(strings.Split(s, ","))
		}
	}
	list, ok := v.([]any)
	if !ok {
		return nil, "Not a list"
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Sprintf("Not a string: %v", e)
		}
		out[i] = s
	}
	return out, ""
}

func toAnyList(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// parseRevise validates package_revise's data dict. Keys outside the
// schema are refused (CKAN ignores them silently).
func parseRevise(data map[string]any) (*reviseParams, *ckan.Error) {
	p := &reviseParams{matchKeys: map[string]any{}, updKeys: map[string]any{}}
	errs := map[string]any{}
	for k, v := range data {
		switch {
		case strings.HasPrefix(k, "match__"):
			p.matchKeys[strings.TrimPrefix(k, "match__")] = jsonOrString(v)
		case strings.HasPrefix(k, "update__"):
			p.updKeys[strings.TrimPrefix(k, "update__")] = jsonOrString(v)
		case k == "match" || k == "update":
			m, ok := jsonOrString(v).(map[string]any)
			if !ok {
				errs[k] = []string{"Must be a dict"}
				continue
			}
			if k == "match" {
				p.match, p.matchSet = m, true
			} else {
				p.update, p.updateSet = m, true
			}
		case k == "filter" || k == "include":
			list, msg := globList(v)
			if msg != "" {
				errs[k] = []string{msg}
				continue
			}
			if k == "filter" {
				p.filter, p.hasFilter = list, true
			} else {
				p.include, p.hasInclude = list, true
			}
		default:
			errs[k] = []string{fmt.Sprintf("The input field %s was not expected.", k)}
		}
	}
	if len(errs) > 0 {
		return nil, ckan.Validation(errs)
	}
	return p, nil
}

// ref is the dataset to revise: match__id, match.id, match__name, match.name.
func (p *reviseParams) ref() string {
	for _, v := range []any{p.matchKeys["id"], p.match["id"], p.matchKeys["name"], p.match["name"]} {
		if s, ok := str(v); ok && s != "" {
			return s
		}
	}
	return ""
}

func packageRevise(ctx context.Context, s *Service, r *Request) (any, error) {
	p, verr := parseRevise(r.Data)
	if verr != nil {
		return nil, verr
	}
	ref := p.ref()
	if ref == "" {
		return nil, ckan.FieldError("match__id", ckan.MsgMissing)
	}
	c := r.Caller
	d, err := s.datasetByRef(ref, "")
	if err != nil {
		return nil, err
	}
	var before *Dataset
	next, err := s.mutateDataset(ctx, d.ID, func(base *Dataset) (*Dataset, error) {
		before = base
		return viewed2(s.st, func() (*Dataset, error) {
			// the revision applies to the freshest copy: a match that no
			// longer holds after a concurrent write fails here
			orig, err := genericOf(s.st.datasetDict(base, r.SiteURL))
			if err != nil {
				return nil, err
			}
			if err := p.apply(r.Data, orig); err != nil {
				return nil, err
			}
			at := now()
			in, verr := s.st.buildDataset(c, orig, base, at, true)
			if verr != nil {
				return nil, verr
			}
			in.d.MetadataModified = at
			return in.d, nil
		})
	})
	if err != nil {
		return nil, err
	}
	s.afterDatasetWrite(ctx, before, next)
	shown, err := genericOf(s.show(next.ID, r.SiteURL))
	if err != nil {
		return nil, err
	}
	out := map[string]any{"package": shown}
	if p.hasInclude {
		filterGlob(out, parseGlobs(p.include))
	}
	return out, nil
}

// apply runs match, filter and update (in CKAN's order) on orig, a
// package_show dict. data is the request, echoed by a DataError.
func (p *reviseParams) apply(data map[string]any, orig map[string]any) error {
	var unmatched [][]any
	if p.matchSet {
		unmatched = append(unmatched, checkDict(orig, p.match, nil)...)
	}
	for _, k := range sortedKeys(p.matchKeys) {
		u, err := checkStringKey(orig, k, p.matchKeys[k])
		if err != nil {
			return ckan.DataError(err.Error(), data)
		}
		unmatched = append(unmatched, u...)
	}
	if len(unmatched) > 0 {
		msgs := make([]string, len(unmatched))
		for i, u := range unmatched {
			msgs[i] = pathString(u)
		}
		return ckan.Validation(map[string]any{"match": msgs})
	}
	if p.hasFilter {
		id := orig["id"]
		filterGlob(orig, parseGlobs(p.filter))
		orig["id"] = id
	}
	if p.updateSet {
		if _, err := mergeDict(orig, p.update, nil); err != nil {
			return ckan.Validation(map[string]any{"update": []string{err.Error()}})
		}
	}
	// __extend keys first, so that later keys may reach the new items
	keys := sortedKeys(p.updKeys)
	sort.SliceStable(keys, func(i, j int) bool {
		return strings.HasSuffix(keys[i], "extend") && !strings.HasSuffix(keys[j], "extend")
	})
	for _, k := range keys {
		if err := mergeStringKey(orig, k, p.updKeys[k]); err != nil {
			return ckan.Validation(map[string]any{k: []string{err.Error()}})
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// genericOf is v as a client decodes it: maps, lists, strings, numbers
// (json.Number), booleans and nil.
func genericOf(v any) (map[string]any, error) {
	b, err := ckan.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("package_revise: encode: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("package_revise: decode: %w", err)
	}
	return out, nil
}

// The rest is CKAN's ckan/lib/navl/dictization_functions.py (check_dict,
// resolve_string_key, filter_glob_match, update_merge_*) on decoded JSON.

// errDataKey is the DataError of the dictization functions.
type errDataKey string

func (e errDataKey) Error() string { return string(e) }

// pathString joins a path as CKAN does ("resources__0__name").
func pathString(path []any) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, "__")
}

func with(path []any, p any) []any {
	return append(append(make([]any, 0, len(path)+1), path...), p)
}

// valuesEqual is Python's == on decoded JSON (numbers by value).
func valuesEqual(a, b any) bool {
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && na.Cmp(nb) == 0
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !valuesEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func number(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case json.Number:
		f, _, err := big.ParseFloat(string(x), 10, 128, big.ToNearestEven)
		return f, err == nil
	case float64:
		return big.NewFloat(x), true
	case int:
		return big.NewFloat(float64(x)), true
	case int64:
		return big.NewFloat(float64(x)), true
	}
	return nil, false
}

func checkDict(data any, sel map[string]any, path []any) [][]any {
	m, ok := data.(map[string]any)
	if !ok {
		return [][]any{path}
	}
	var out [][]any
	for _, k := range sortedKeys(sel) {
		v := sel[k]
		cur, ok := m[k]
		switch sv := v.(type) {
		case map[string]any:
			if !ok {
				out = append(out, with(path, k))
			} else {
				out = append(out, checkDict(cur, sv, with(path, k))...)
			}
		case []any:
			if !ok {
				out = append(out, with(path, k))
			} else {
				out = append(out, checkList(cur, sv, with(path, k))...)
			}
		default:
			if !ok || !valuesEqual(cur, v) {
				out = append(out, with(path, k))
			}
		}
	}
	return out
}

func checkList(data any, sel []any, path []any) [][]any {
	l, ok := data.([]any)
	if !ok {
		return [][]any{path}
	}
	var out [][]any
	for i, v := range sel {
		switch {
		case i >= len(l):
			out = append(out, with(path, i))
		default:
			switch sv := v.(type) {
			case map[string]any:
				out = append(out, checkDict(l[i], sv, with(path, i))...)
			case []any:
				out = append(out, checkList(l[i], sv, with(path, i))...)
			default:
				if !valuesEqual(l[i], v) {
					out = append(out, with(path, i))
				}
			}
		}
	}
	return out
}

// resolveKey is resolve_string_key: the value at key ("resources__0",
// "resources__1492a" for the resource whose id starts so, "resources__-1")
// and its path, with list indexes made non-negative.
func resolveKey(data any, key string) (any, []any, error) {
	var path []any
	cur := data
	for _, k := range strings.Split(key, "__") {
		fail := errDataKey("Unmatched key " + pathString(with(path, k)))
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[k]
			if !ok {
				return nil, nil, fail
			}
			path, cur = append(path, k), v
		case []any:
			if len(k) >= 5 {
				found := -1
				for i, rec := range c {
					m, ok := rec.(map[string]any)
					id, isStr := m["id"].(string)
					if !ok || !isStr {
						return nil, nil, fail
					}
					if strings.HasPrefix(id, k) {
						found = i
						break
					}
				}
				if found < 0 {
					return nil, nil, fail
				}
				path, cur = append(path, found), c[found]
				continue
			}
			i, err := strconv.Atoi(k)
			if err != nil || i < -len(c) || i >= len(c) {
				return nil, nil, fail
			}
			if i < 0 {
				i += len(c)
			}
			path, cur = append(path, i), c[i]
		default:
			return nil, nil, fail
		}
	}
	return cur, path, nil
}

func checkStringKey(data map[string]any, key string, value any) ([][]any, error) {
	cur, path, err := resolveKey(data, key)
	if err != nil {
		return nil, err
	}
	switch v := value.(type) {
	case map[string]any:
		return checkDict(cur, v, path), nil
	case []any:
		return checkList(cur, v, path), nil
	}
	if !valuesEqual(cur, value) {
		return [][]any{path}, nil
	}
	return nil, nil
}

// glob is one filter pattern: keep ("+") or remove, split on "__".
type glob struct {
	keep  bool
	parts []string
}

func parseGlobs(patterns []string) []glob {
	out := make([]glob, len(patterns))
	for i, p := range patterns {
		out[i] = glob{keep: strings.HasPrefix(p, "+"), parts: strings.Split(strings.TrimLeft(p, "-+"), "__")}
	}
	return out
}

// filterGlob is filter_glob_match: it removes what the patterns name from
// data (maps in place) and returns data (a list may shrink).
func filterGlob(data any, globs []glob) any {
	switch d := data.(type) {
	case map[string]any:
		protected := map[string]any{}
		var order []string
		children := map[string][]glob{}
		for _, g := range globs {
			head := g.parts[0]
			if head == "*" {
				if g.keep {
					for k, v := range d {
						protected[k] = v
					}
				} else {
					clear(d)
				}
				continue
			}
			if _, ok := d[head]; !ok {
				continue
			}
			switch {
			case len(g.parts) > 1:
				if _, seen := children[head]; !seen {
					order = append(order, head)
				}
				children[head] = append(children[head], glob{g.keep, g.parts[1:]})
			case g.keep:
				protected[head] = d[head]
			default:
				delete(d, head)
			}
		}
		for k, v := range protected {
			d[k] = v
		}
		for _, head := range order {
			if v, ok := d[head]; ok {
				d[head] = filterGlob(v, children[head])
			}
		}
		return d
	case []any:
		protected, removed := map[int]bool{}, map[int]bool{}
		var order []int
		children := map[int][]glob{}
		for _, g := range globs {
			head := g.parts[0]
			if head == "*" {
				for i := range d {
					if g.keep && !removed[i] {
						protected[i] = true
					} else if !g.keep && !protected[i] {
						removed[i] = true
					}
				}
				continue
			}
			_, path, err := resolveKey(d, head)
			if err != nil {
				continue
			}
			i := path[0].(int)
			switch {
			case len(g.parts) > 1:
				if _, seen := children[i]; !seen {
					order = append(order, i)
				}
				children[i] = append(children[i], glob{g.keep, g.parts[1:]})
			case g.keep:
				if !removed[i] {
					protected[i] = true
				}
			default:
				if !protected[i] {
					removed[i] = true
				}
			}
		}
		for _, i := range order {
			if !removed[i] || protected[i] {
				d[i] = filterGlob(d[i], children[i])
			}
		}
		kept := make([]any, 0, len(d))
		for i, e := range d {
			if !removed[i] || protected[i] {
				kept = append(kept, e)
			}
		}
		return kept
	}
	return data
}

// mergeDict is update_merge_dict; it returns data (maps change in place).
func mergeDict(data map[string]any, upd any, path []any) (map[string]any, error) {
	u, ok := upd.(map[string]any)
	if !ok {
		return nil, errDataKey("Expected dict for " + pathString(path))
	}
	for _, k := range sortedKeys(u) {
		v := u[k]
		switch cur := data[k].(type) {
		case map[string]any:
			if _, err := mergeDict(cur, v, with(path, k)); err != nil {
				return nil, err
			}
		case []any:
			l, err := mergeList(cur, v, with(path, k))
			if err != nil {
				return nil, err
			}
			data[k] = l
		default:
			data[k] = v
		}
	}
	return data, nil
}

// mergeList is update_merge_list; it returns the list (it may grow).
func mergeList(data []any, upd any, path []any) ([]any, error) {
	u, ok := upd.([]any)
	if !ok {
		return nil, errDataKey("Expected list for " + pathString(path))
	}
	for i, v := range u {
		if i >= len(data) {
			data = append(data, v)
			continue
		}
		switch cur := data[i].(type) {
		case map[string]any:
			if _, err := mergeDict(cur, v, with(path, i)); err != nil {
				return nil, err
			}
		case []any:
			l, err := mergeList(cur, v, with(path, i))
			if err != nil {
				return nil, err
			}
			data[i] = l
		default:
			data[i] = v
		}
	}
	return data, nil
}

// setAt replaces the value at path in root.
func setAt(root map[string]any, path []any, v any) {
	var cur any = root
	for i, p := range path {
		last := i == len(path)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[p.(string)] = v
				return
			}
			cur = c[p.(string)]
		case []any:
			if last {
				c[p.(int)] = v
				return
			}
			cur = c[p.(int)]
		}
	}
}

// mergeStringKey is update_merge_string_key, with "extend" adding items
// to a list.
func mergeStringKey(data map[string]any, key string, value any) error {
	parts := strings.Split(key, "__")
	k := parts[len(parts)-1]
	parentKey := strings.Join(parts[:len(parts)-1], "__")
	var cur any = data
	var path []any
	if parentKey != "" {
		var err error
		if cur, path, err = resolveKey(data, parentKey); err != nil {
			return err
		}
	}
	switch c := cur.(type) {
	case map[string]any:
		_, err := mergeDict(c, map[string]any{k: value}, path)
		return err
	case []any:
		if k == "extend" {
			items, ok := value.([]any)
			if !ok {
				return errDataKey("Expected list for " + parentKey)
			}
			setAt(data, path, append(c, items...))
			return nil
		}
		child, sub, err := resolveKey(c, k)
		if err != nil {
			return err
		}
		i := sub[0].(int)
		switch ch := child.(type) {
		case map[string]any:
			_, err = mergeDict(ch, value, with(path, i))
		case []any:
			var l []any
			if l, err = mergeList(ch, value, with(path, i)); err == nil {
				c[i] = l
			}
		default:
			c[i] = value
		}
		return err
	}
	return errDataKey("Expected list or dict for " + parentKey)
}
