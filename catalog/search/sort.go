package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

type sortKey struct {
	field string
	desc  bool
	// idx is the field's index in sortFields, or keyScore or keyID.
	idx int
}

const (
	keyScore = -1
	keyID    = -2
)

// timeLayout is the layout of the timestamps callers give for sorting
// (fixed width, so that the text orders as the time does).
const timeLayout = "2006-01-02T15:04:05.000000Z"

// noTime marks a sort value that is not a timestamp in timeLayout.
const noTime = math.MinInt64

// sortTime is v as Unix microseconds when v is exactly a timestamp in
// timeLayout, else noTime. Different such texts give different numbers in
// the same order.
func sortTime(v string) int64 {
	if len(v) != len(timeLayout) || v[len(v)-1] != 'Z' {
		return noTime
	}
	t, err := time.Parse(timeLayout, v)
	if err != nil || t.Format(timeLayout) != v {
		return noTime
	}
	return t.UnixMicro()
}

// sortFields are the sortable fields kept in Doc.sortv, besides score and id.
var sortFields = [...]string{"metadata_modified", "metadata_created", "name", "title_string"}

func sortIndex(field string) int {
	switch field {
	case "score":
		return keyScore
	case "id":
		return keyID
	}
	for i, f := range sortFields {
		if f == field {
			return i
		}
	}
	return keyID
}

var sortable = map[string]bool{"score": true, "metadata_modified": true, "metadata_created": true, "name": true, "title": true, "title_string": true, "id": true}

// parseSort reads a sort spec. A field named again is left out: the
// order is decided before it is reached (the same field compared equal),
// so there are at most as many keys as sortable fields.
func parseSort(s string) ([]sortKey, error) {
	if err := checkLength("sort", s); err != nil {
		return nil, err
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "rank" {
		s = "score desc, metadata_modified desc"
	}
	var keys []sortKey
	for part := range strings.SplitSeq(s, ",") {
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		k := sortKey{field: f[0]}
		if len(f) > 2 || (len(f) == 2 && f[1] != "asc" && f[1] != "desc") {
			return nil, &Error{Message: "Can't determine a Sort Order (asc or desc) in sort spec '" + strings.TrimSpace(part) + "'"}
		}
		if len(f) == 1 {
			return nil, &Error{Message: "Can't determine a Sort Order (asc or desc) in sort spec '" + strings.TrimSpace(part) + "'"}
		}
		k.desc = f[1] == "desc"
		if k.field == "title" {
			k.field = "title_string"
		}
		if !sortable[k.field] {
			return nil, &Error{Message: "sort param field can't be found: " + f[0]}
		}
		k.idx = sortIndex(k.field)
		if !slices.ContainsFunc(keys, func(o sortKey) bool { return o.field == k.field }) {
			keys = append(keys, k)
		}
	}
	// A stable final order: id ascending.
	keys = append(keys, sortKey{field: "id", idx: keyID})
	return keys, nil
}

func (ix *Index) less(keys []sortKey, a, b hit) bool {
	for _, k := range keys {
		var c int
		switch k.idx {
		case keyScore:
			switch {
			case a.score < b.score:
				c = -1
			case a.score > b.score:
				c = 1
			}
		case keyID:
			c = strings.Compare(ix.slots[a.slot].ID, ix.slots[b.slot].ID)
		default:
			if ta, tb := ix.sortTime[k.idx][a.slot], ix.sortTime[k.idx][b.slot]; ta != noTime && tb != noTime {
				c = cmp.Compare(ta, tb)
			} else {
				col := ix.sortCol[k.idx]
				c = strings.Compare(col[a.slot], col[b.slot])
			}
		}
		if c == 0 {
			continue
		}
		if k.desc {
			return c > 0
		}
		return c < 0
	}
	return false
}
