package web

import (
	"sort"
	"strings"
)

// maxNearestRows bounds the result rows whose nearest training compounds a
// model page lists (a batch answer may hold a thousand rows; the JSON
// answer holds them all).
const maxNearestRows = 100

// nearestSuffix ends the member of a result row that holds its nearest
// training compounds ("nearest_compounds", or "<task>_nearest_compounds"
// per applicability domain of a model with one per task).
const nearestSuffix = "nearest_compounds"

// nearestRow is one training compound near one input, as the page lists it.
type nearestRow struct {
	// Input is the row's SMILES; Domain the task of a per-task domain, or "".
	Input, Domain string
	// SMILES, Similarity and Labels ("task: label; ...") describe the compound.
	SMILES, Similarity, Labels string
}

// takeNearest removes the nearest-compound members from the result rows
// (the page lists them in their own table, not as cells) and returns them
// as that table's rows, for the first maxNearestRows rows; more is true
// when rows beyond those had some.
func takeNearest(rows []any) (out []nearestRow, more bool) {
	for i, r := range rows {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		input, _ := m["smiles"].(string)
		var keys []string
		for k := range m {
			if strings.HasSuffix(k, nearestSuffix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := m[k]
			delete(m, k)
			list, _ := v.([]any)
			if i >= maxNearestRows {
				more = more || len(list) > 0
				continue
			}
			domain := strings.TrimSuffix(strings.TrimSuffix(k, nearestSuffix), "_")
			for _, c := range list {
				cm, _ := c.(map[string]any)
				if cm == nil {
					continue
				}
				smi, _ := cm["smiles"].(string)
				out = append(out, nearestRow{Input: input, Domain: domain, SMILES: smi,
					Similarity: cell(cm["similarity"]), Labels: labelsText(cm["labels"])})
			}
		}
	}
	return out, more
}

// labelsText writes a compound's labels as "task: label; ...", or the
// label alone for a model of one task.
func labelsText(v any) string {
	m, _ := v.(map[string]any)
	if len(m) == 1 {
		for _, l := range m {
			return cell(l)
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + cell(m[k])
	}
	return strings.Join(parts, "; ")
}
