package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"toxgate/catalog/chemindex"
	"toxgate/catalog/ckan"
	"toxgate/catalog/datastore"
	"toxgate/sdk/chem"
)

func init() {
	register("compound_resolve", true, "Resolve a compound name, synonym, CAS number, DTXSID, InChIKey or SMILES to its structure and identifiers, with the source of each.", compoundResolve)
	registerDS("structure_search", true, "Find the DataStore rows holding a structure: exact, similar above a Tanimoto threshold (Morgan r=2, 2048 bits), or containing a substructure (SMARTS, or a molecule).", structureSearch)
	registerDS("compound_dictionary_register", false, "Register (or, with registered=false, unregister) a DataStore table as a compound dictionary the resolver reads.", compoundDictionaryRegister)
}

// Bounds of structure_search.
const (
	structureSearchDefaultLimit = 20
	structureSearchMaxLimit     = 1000
	structureSearchDefaultSim   = 0.7
)

// chemQueryError is the CKAN error of a query the resolver refuses.
func chemQueryError(field string, err error) error {
	var qe *chemindex.QueryError
	if errors.As(err, &qe) {
		msg := strings.TrimPrefix(qe.Msg, "q: ")
		return ckan.FieldError(field, msg)
	}
	return err
}

// chemResolver is the resolver, loaded on the first call that needs it.
func (s *Service) chemResolver(context.Context) (*chemindex.Resolver, error) {
	r, err := s.chem.load()
	if err != nil {
		return nil, fmt.Errorf("chem: %w", err)
	}
	return r, nil
}

// maxResolveList bounds the identifiers one compound_resolve call with a
// list resolves.
const maxResolveList = 10000

// compoundResolveList answers a list of identifiers (names, synonyms, CAS
// numbers, DTXSIDs, InChIKeys; never parsed as SMILES): per item, the
// compound's standardized SMILES and identifiers, or null.
func compoundResolveList(s *Service, res *chemindex.Resolver, l []any) (any, error) {
	if len(l) > maxResolveList {
		return nil, ckan.FieldError("q", fmt.Sprintf("%d items, at most %d", len(l), maxResolveList))
	}
	out := make([]any, len(l))
	for i, v := range l {
		q, _ := v.(string)
		c, err := res.LookupIdentifier(q)
		if err != nil {
			return nil, ckan.FieldError("q", fmt.Sprintf("item %d: %s", i+1, err.Error()))
		}
		if c == nil {
			out[i] = nil
			continue
		}
		out[i] = map[string]any{"input": q, "smiles": c.Structure.SMILES, "matched_by": c.MatchedBy,
			"dtxsid": c.DTXSID, "preferred_name": c.Name, "cas": c.CAS, "sources": c.Sources}
	}
	return out, nil
}

func compoundResolve(ctx context.Context, s *Service, r *Request) (any, error) {
	q, _ := r.Data["q"].(string)
	list, isList := r.Data["q"].([]any)
	if strings.TrimSpace(q) == "" && !isList {
		return nil, ckan.FieldError("q", ckan.MsgMissing)
	}
	res, err := s.chemResolver(ctx)
	if err != nil {
		return nil, err
	}
	if isList {
		return compoundResolveList(s, res, list)
	}
	if s.ds != nil {
		s.chem.fresh(ctx) // dictionaries written before this call are read
	}
	out, err := res.Resolve(q)
	if err != nil {
		return nil, chemQueryError("q", err)
	}
	return out, nil
}

// floatParam reads a number in [lo, hi] (def when absent).
func floatParam(data map[string]any, key string, def, lo, hi float64) (float64, error) {
	v, ok := data[key]
	if !ok || v == nil || v == "" {
		return def, nil
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		p, err := x.Float64()
		if err != nil {
			return 0, ckan.FieldError(key, "Please enter a number")
		}
		f = p
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, ckan.FieldError(key, "Please enter a number")
		}
		f = p
	default:
		return 0, ckan.FieldError(key, "Please enter a number")
	}
	if math.IsNaN(f) || f < lo || f > hi {
		return 0, ckan.FieldError(key, fmt.Sprintf("Must be a number from %g to %g", lo, hi))
	}
	return f, nil
}

func structureSearch(ctx context.Context, s *Service, r *Request) (any, error) {
	q, _ := r.Data["smiles"].(string)
	if strings.TrimSpace(q) == "" {
		q, _ = r.Data["q"].(string)
	}
	smarts, _ := r.Data["smarts"].(string)
	mode, _ := r.Data["mode"].(string)
	if mode == "" {
		mode = string(chemindex.ModeSimilarity)
		if strings.TrimSpace(smarts) != "" {
			mode = string(chemindex.ModeSubstructure)
		}
	}
	switch chemindex.Mode(mode) {
	case chemindex.ModeExact, chemindex.ModeSimilarity:
		if strings.TrimSpace(q) == "" {
			return nil, ckan.FieldError("smiles", ckan.MsgMissing)
		}
	case chemindex.ModeSubstructure:
		if strings.TrimSpace(q) == "" && strings.TrimSpace(smarts) == "" {
			return nil, ckan.FieldError("smarts", "Missing value: give smarts (a SMARTS pattern) or smiles (a molecule, name or identifier)")
		}
	default:
		return nil, ckan.FieldError("mode", "Value must be one of ['exact', 'similarity', 'substructure']")
	}
	threshold, err := floatParam(r.Data, "threshold", structureSearchDefaultSim, 0.05, 1)
	if err != nil {
		return nil, err
	}
	limit, cerr := ckan.Natural(r.Data, "limit", structureSearchDefaultLimit)
	if cerr != nil {
		return nil, cerr
	}
	if limit > structureSearchMaxLimit {
		return nil, ckan.FieldError("limit", fmt.Sprintf("Must be at most %d", structureSearchMaxLimit))
	}
	if s.opts.Chem.IndexMaxRows <= 0 {
		return nil, ckan.ValidationMessage("the structure index is off (datastore.structure_index_max_rows is 0)")
	}
	res, err := s.chemResolver(ctx)
	if err != nil {
		return nil, err
	}
	var (
		st         *chemindex.Structure
		resolution *chemindex.Resolution
		pattern    *chem.Query
	)
	if mode == string(chemindex.ModeSubstructure) {
		st, resolution, pattern, err = substructurePattern(res, q, smarts)
	} else {
		st, resolution, err = res.ResolveStructure(q)
		err = chemQueryError("smiles", err)
	}
	if err != nil {
		return nil, err
	}
	complete := s.chem.fresh(ctx)
	// the tables the caller may read, decided once under the catalog's lock
	tables := s.chem.idx.Tables()
	type place struct {
		pkgID, pkgName, pkgTitle, resName string
		private                           bool
	}
	allowed := map[string]place{}
	s.st.view(func() {
		for _, t := range tables {
			d, i := s.st.findResource(t.Resource)
			if d == nil || !s.st.canRead(r.Caller, d) {
				continue
			}
			p := place{pkgID: d.ID, pkgName: d.Name, pkgTitle: d.Title, private: d.Private}
			if nm := d.Resources[i].Name; nm != nil {
				p.resName = *nm
			}
			allowed[t.Resource] = p
		}
	})
	found := s.chem.idx.Search(chemindex.Query{Structure: st, Mode: chemindex.Mode(mode), Threshold: threshold, Limit: limit,
		Pattern: pattern, Steps: chemindex.SubstructureSteps,
		Allow: func(id string) bool { _, ok := allowed[id]; return ok }})
	if errors.Is(found.Err, chem.ErrStepBudget) {
		return nil, ckan.ValidationMessage(fmt.Sprintf("the substructure pattern needs more than %d search steps over the indexed rows; make it more specific", chemindex.SubstructureSteps))
	} else if found.Err != nil {
		return nil, found.Err
	}
	results := make([]map[string]any, 0, len(found.Hits))
	for _, h := range found.Hits {
		p := allowed[h.Resource]
		hit := map[string]any{
			"resource_id": h.Resource, "resource_name": p.resName, "package_id": p.pkgID, "package_name": p.pkgName,
			"package_title": p.pkgTitle, "column": h.Column, "_id": h.RowID, "smiles": h.SMILES,
		}
		if st != nil {
			hit["similarity"] = math.Round(h.Similarity*1e4) / 1e4
		}
		results = append(results, hit)
	}
	if st == nil {
		src := strings.TrimSpace(smarts)
		if src == "" {
			src = strings.TrimSpace(q)
		}
		out := map[string]any{"query": map[string]any{"input": src, "kind": "smarts"}, "mode": mode, "limit": limit,
			"count": found.Total, "results": results, "index_complete": complete}
		return out, nil
	}
	query := map[string]any{"input": q, "kind": resolution.Kind, "standardized_smiles": st.SMILES,
		"structure_key": st.Key, "formula": st.Formula}
	if len(resolution.Compounds) > 0 {
		c := resolution.Compounds[0]
		query["compound"] = map[string]any{"dtxsid": c.DTXSID, "preferred_name": c.Name, "cas": c.CAS, "sources": c.Sources}
	}
	out := map[string]any{"query": query, "mode": mode, "limit": limit, "count": found.Total, "results": results,
		"index_complete": complete, "fingerprint": "morgan r=2, 2048 bits (RDKit GetMorganFingerprintAsBitVect)"}
	if mode == string(chemindex.ModeSimilarity) {
		out["threshold"] = threshold
	}
	return out, nil
}

// substructurePattern reads the pattern of a substructure search: smarts
// as SMARTS, else q resolved (a SMILES, name or identifier) to its
// standardized structure, used as a molecule pattern (RDKit's rules for a
// molecule as a query); hits are then ranked by similarity to it. A q that
// resolves to nothing but reads as SMARTS is taken as SMARTS.
func substructurePattern(res *chemindex.Resolver, q, smarts string) (*chemindex.Structure, *chemindex.Resolution, *chem.Query, error) {
	if strings.TrimSpace(smarts) != "" {
		p, err := chem.ParseSMARTS(strings.TrimSpace(smarts))
		if err != nil {
			return nil, nil, nil, ckan.FieldError("smarts", err.Error())
		}
		return nil, nil, p, nil
	}
	st, resolution, err := res.ResolveStructure(q)
	if err != nil {
		if p, perr := chem.ParseSMARTS(strings.TrimSpace(q)); perr == nil {
			return nil, nil, p, nil
		}
		return nil, nil, nil, chemQueryError("smiles", err)
	}
	m, err := chem.ParseSMILES(st.SMILES)
	if err != nil {
		return nil, nil, nil, ckan.FieldError("smiles", err.Error())
	}
	return st, resolution, chem.QueryFromMol(m), nil
}

func compoundDictionaryRegister(ctx context.Context, s *Service, r *Request) (any, error) {
	id := datastore.ResourceID(r.Data)
	if _, err := s.dsTarget(id); err != nil {
		return nil, err
	}
	on := true
	if v, ok := r.Data["registered"]; ok {
		switch x := v.(type) {
		case bool:
			on = x
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, ckan.FieldError("registered", "Please enter true or false")
			}
			on = b
		default:
			return nil, ckan.FieldError("registered", "Please enter true or false")
		}
	}
	if err := s.ds.SetDictionary(ctx, id, on); err != nil {
		return nil, err
	}
	s.chem.mark(id)
	s.chem.fresh(ctx)
	return map[string]any{"resource_id": id, "registered": on}, nil
}
