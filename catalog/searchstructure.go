package catalog

import (
	"context"
	"strings"

	"toxgate/catalog/chemindex"
	"toxgate/catalog/ckan"
)

// structureFilterPrefix starts package_search's structure filter in fq:
// structure:SMILES or structure:"a name with spaces".
const structureFilterPrefix = "structure:"

// cutStructureFilter removes the structure filters from fq and returns
// their values.
func cutStructureFilter(fq string) (string, []string) {
	var vals []string
	var rest strings.Builder
	for {
		i := strings.Index(fq, structureFilterPrefix)
		if i < 0 || (i > 0 && fq[i-1] != ' ' && fq[i-1] != '+' && fq[i-1] != '(') {
			if i < 0 {
				rest.WriteString(fq)
				break
			}
			rest.WriteString(fq[:i+len(structureFilterPrefix)])
			fq = fq[i+len(structureFilterPrefix):]
			continue
		}
		rest.WriteString(strings.TrimSuffix(fq[:i], "+"))
		v := fq[i+len(structureFilterPrefix):]
		var end int
		if strings.HasPrefix(v, `"`) {
			if j := strings.IndexByte(v[1:], '"'); j >= 0 {
				vals = append(vals, v[1:j+1])
				end = j + 2
			} else {
				vals = append(vals, v[1:])
				end = len(v)
			}
		} else {
			end = strings.IndexAny(v, " )")
			if end < 0 {
				end = len(v)
			}
			vals = append(vals, v[:end])
		}
		fq = v[end:]
	}
	return strings.TrimSpace(rest.String()), vals
}

// structureDatasets returns the ids of the datasets c may read with a
// DataStore table holding a structure similar (Tanimoto ≥ 0.7) to each
// of vals, all of them; nil, nil when vals is empty.
func (s *Service) structureDatasets(ctx context.Context, c Caller, vals []string) (map[string]bool, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	if s.ds == nil || s.opts.Chem.IndexMaxRows <= 0 {
		return nil, ckan.SearchQueryError("structure: filters need the structure index (a DataStore and datastore.structure_index_max_rows)")
	}
	res, err := s.chemResolver(ctx)
	if err != nil {
		return nil, err
	}
	var out map[string]bool
	for _, v := range vals {
		st, _, err := res.ResolveStructure(v)
		if err != nil {
			return nil, ckan.SearchQueryError("structure:" + v + ": " + err.Error())
		}
		found := s.chem.idx.Resources(chemindex.Query{Structure: st, Mode: chemindex.ModeSimilarity, Threshold: structureSearchDefaultSim})
		ids := map[string]bool{}
		s.st.view(func() {
			for _, r := range found {
				if d, _ := s.st.findResource(r); d != nil && s.st.canRead(c, d) {
					ids[d.ID] = true
				}
			}
		})
		if out == nil {
			out = ids
		} else {
			for id := range out {
				if !ids[id] {
					delete(out, id)
				}
			}
		}
	}
	return out, nil
}
