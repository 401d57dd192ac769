package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"toxgate/catalog/ckan"
	"toxgate/catalog/search"
)

func init() {
	register("tag_search", true, "Tags whose names contain every query string (query, vocabulary_id, limit, offset).", tagSearch)
	register("tag_autocomplete", true, "Names of the tags containing a string (query, vocabulary_id, limit, offset).", tagAutocomplete)
}

// foundTagRow is one tag_search result: CKAN's dictized Tag.
type foundTagRow struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	VocabularyID *string `json:"vocabulary_id"`
}

// searchTags is CKAN's _tag_search: the free tags on datasets the caller
// may read (CKAN: on any dataset), or the tags of vocabulary_id, whose
// names contain every term, by name, with the count before paging.
// maxTagTerms caps the distinct query strings of one tag search.
const maxTagTerms = 32

func (s *Service) searchTags(r *Request) ([]foundTagRow, int, error) {
	var terms []string
	raw := r.Data["query"]
	if raw == nil || raw == "" {
		raw = r.Data["q"]
	}
	switch x := raw.(type) {
	case string:
		terms = []string{x}
	case []any:
		for _, e := range x {
			if t, ok := e.(string); ok {
				terms = append(terms, t)
			}
		}
	}
	if fields, ok := r.Data["fields"].(map[string]any); ok {
		for _, k := range []string{"tag", "tags"} {
			if t, ok := fields[k].(string); ok {
				terms = append(terms, t)
			}
		}
	}
	lower := terms[:0]
	seenTerm := make(map[string]bool, len(terms))
	size := 0
	for _, t := range terms {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" && !seenTerm[t] {
			seenTerm[t] = true
			size += len(t)
			lower = append(lower, t)
		}
	}
	// Every tag of every readable dataset is matched against every term:
	// the terms are de-duplicated and bounded as a search's clauses are.
	if len(lower) > maxTagTerms || size > search.MaxQueryBytes {
		return nil, 0, ckan.SearchError(fmt.Sprintf("Search error: a tag search takes at most %d distinct terms of %d bytes in all", maxTagTerms, search.MaxQueryBytes))
	}
	limit, err := ckan.Natural(r.Data, "limit", -1)
	if err != nil {
		return nil, 0, err
	}
	offset, err := ckan.Natural(r.Data, "offset", 0)
	if err != nil {
		return nil, 0, err
	}
	if len(lower) == 0 {
		return nil, 0, nil
	}
	matches := func(name string) bool {
		for _, t := range lower {
			if !containsFold(name, t) {
				return false
			}
		}
		return true
	}
	var rows []foundTagRow
	s.st.view(func() {
		if _, byVocab := r.Data["vocabulary_id"]; byVocab {
			ref, _ := str(r.Data["vocabulary_id"])
			if v := s.st.vocab(ref); v != nil {
				id := v.ID
				for _, t := range v.Tags {
					if matches(t.Name) {
						rows = append(rows, foundTagRow{ID: t.ID, Name: t.Name, VocabularyID: &id})
					}
				}
			}
		} else {
			seen := map[string]bool{}
			for _, d := range s.st.datasets {
				if d.State != StateActive || !s.st.canRead(r.Caller, d) {
					continue
				}
				for _, t := range d.Tags {
					if !seen[t] && matches(t) {
						seen[t] = true
						rows = append(rows, foundTagRow{ID: nameUUID(t), Name: t})
					}
				}
			}
		}
	})
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	count := len(rows)
	rows = rows[min(offset, len(rows)):]
	if limit >= 0 && limit < len(rows) {
		rows = rows[:limit]
	}
	return rows, count, nil
}

func tagSearch(_ context.Context, s *Service, r *Request) (any, error) {
	rows, count, err := s.searchTags(r)
	if err != nil {
		return nil, err
	}
	if rows == nil {
		rows = []foundTagRow{}
	}
	return map[string]any{"count": count, "results": rows}, nil
}

func tagAutocomplete(_ context.Context, s *Service, r *Request) (any, error) {
	rows, _, err := s.searchTags(r)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rows))
	for i, t := range rows {
		names[i] = t.Name
	}
	return names, nil
}
