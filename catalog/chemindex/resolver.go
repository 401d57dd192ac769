package chemindex

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Resolver answers what a name or identifier stands for, from the embedded
// compound tables and from the dictionaries registered at run time. It is
// safe for concurrent use: lookups read an immutable snapshot that each
// change of the dictionaries replaces.
type Resolver struct {
	base *layer

	mu    sync.Mutex // serializes dictionary changes
	dicts map[string]dictionary
	snap  atomic.Pointer[snapshot]
}

type dictionary struct {
	src       Source
	compounds []*Compound
}

// snapshot is what lookups read: the embedded tables' layer (built once)
// and one layer over the registered dictionaries.
type snapshot struct {
	layers  []*layer
	sources map[string]Source
}

// layer holds compounds and their lookup tables.
type layer struct {
	compounds []*Compound
	byName    map[string][]int32 // normName of names and synonyms
	byCAS     map[string][]int32
	byDTXSID  map[string][]int32 // upper case
	byInChI   map[string][]int32
	byKey     map[string][]int32 // structure key
	names     []string           // distinct normalized names, for suggestions
	nameComp  []int32            // first compound of each name
	trigrams  map[uint64][]int32 // trigram -> indices into names
}

// embeddedLayer is the index of the embedded tables, read once per process
// and shared by every Resolver (it is never changed).
var embeddedLayer = sync.OnceValues(func() (*layer, error) {
	base, err := embeddedCompounds()
	if err != nil {
		return nil, err
	}
	return newLayer(base), nil
})

// NewResolver returns a resolver over the embedded compound tables (read
// on the process's first call, about a second of CPU).
func NewResolver() (*Resolver, error) {
	base, err := embeddedLayer()
	if err != nil {
		return nil, err
	}
	r := &Resolver{base: base, dicts: map[string]dictionary{}}
	r.rebuild()
	return r, nil
}

// SetDictionary adds or replaces a run-time dictionary under src.ID.
func (r *Resolver) SetDictionary(src Source, compounds []*Compound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dicts[src.ID] = dictionary{src: src, compounds: compounds}
	r.rebuild()
}

// RemoveDictionary drops the dictionary src (no-op when absent).
func (r *Resolver) RemoveDictionary(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.dicts[id]; ok {
		delete(r.dicts, id)
		r.rebuild()
	}
}

// Sources lists the sources the resolver reads now.
func (r *Resolver) Sources() []Source {
	s := r.snap.Load()
	out := make([]Source, 0, len(s.sources))
	for _, v := range s.sources {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// rebuild makes a new snapshot; r.mu is held (or r is not yet shared).
func (r *Resolver) rebuild() {
	s := &snapshot{sources: map[string]Source{sourceInvitrodb.ID: sourceInvitrodb, sourceHTTK.ID: sourceHTTK},
		layers: []*layer{r.base}}
	ids := make([]string, 0, len(r.dicts))
	for id := range r.dicts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var dict []*Compound
	for _, id := range ids {
		d := r.dicts[id]
		s.sources[id] = d.src
		dict = append(dict, d.compounds...)
	}
	if len(dict) > 0 {
		s.layers = append(s.layers, newLayer(dict))
	}
	r.snap.Store(s)
}

// newLayer indexes compounds.
func newLayer(compounds []*Compound) *layer {
	s := &layer{compounds: compounds, byName: map[string][]int32{}, byCAS: map[string][]int32{}, byDTXSID: map[string][]int32{},
		byInChI: map[string][]int32{}, byKey: map[string][]int32{}, trigrams: map[uint64][]int32{}}
	nameIdx := map[string]int32{}
	var tri []uint64
	addName := func(n string, i int32) {
		n = normName(n)
		if n == "" {
			return
		}
		s.byName[n] = appendOnce(s.byName[n], i)
		if _, ok := nameIdx[n]; !ok {
			k := int32(len(s.names))
			nameIdx[n] = k
			s.names = append(s.names, n)
			s.nameComp = append(s.nameComp, i)
			tri = trigramsOf(n, tri[:0])
			for _, t := range tri {
				s.trigrams[t] = append(s.trigrams[t], k)
			}
		}
	}
	for i, c := range s.compounds {
		k := int32(i)
		addName(c.Name, k)
		for _, syn := range c.Synonyms {
			addName(syn, k)
		}
		if c.CAS != "" {
			s.byCAS[c.CAS] = appendOnce(s.byCAS[c.CAS], k)
		}
		if c.DTXSID != "" {
			u := strings.ToUpper(c.DTXSID)
			s.byDTXSID[u] = appendOnce(s.byDTXSID[u], k)
		}
		if c.InChIKey != "" {
			s.byInChI[c.InChIKey] = appendOnce(s.byInChI[c.InChIKey], k)
		}
		if c.st != nil {
			s.byKey[c.st.Key] = appendOnce(s.byKey[c.st.Key], k)
		}
	}
	return s
}

// find returns the compounds of every layer under key in the table tab
// picks.
func (s *snapshot) find(tab func(*layer) map[string][]int32, key string) []*Compound {
	var out []*Compound
	for _, l := range s.layers {
		for _, i := range tab(l)[key] {
			out = append(out, l.compounds[i])
		}
	}
	return out
}

func appendOnce(l []int32, v int32) []int32 {
	for _, x := range l {
		if x == v {
			return l
		}
	}
	return append(l, v)
}

// Resolution is the answer to a query.
type Resolution struct {
	Query string `json:"query"`
	// Kind is what the query was read as.
	Kind Kind `json:"kind"`
	// Compounds are the known compounds the query names (several when a
	// synonym or structure is shared); each field carries its source.
	Compounds []ResolvedCompound `json:"compounds"`
	// Structure is the standardized structure: of the query when it is
	// SMILES, else of the first compound with a structure.
	Structure *StructureOut `json:"structure,omitempty"`
	// Suggestions are near names when the query names nothing known.
	Suggestions []Suggestion `json:"suggestions,omitempty"`
	// Sources describe every source id used in the answer.
	Sources []Source `json:"sources"`
}

// ResolvedCompound is a compound with its standardized structure.
type ResolvedCompound struct {
	*Compound
	// MatchedBy says which field matched the query.
	MatchedBy string        `json:"matched_by"`
	Structure *StructureOut `json:"structure,omitempty"`
}

// StructureOut is a Structure as answered.
type StructureOut struct {
	SMILES       string `json:"standardized_smiles"`
	StructureKey string `json:"structure_key"`
	Formula      string `json:"formula"`
	Source       string `json:"source"`
}

// Suggestion is a "did you mean" name.
type Suggestion struct {
	Name     string `json:"name"`
	DTXSID   string `json:"dtxsid,omitempty"`
	Distance int    `json:"distance"`
}

// QueryError is a query refused as such (empty, too long, a wrong CAS
// check digit, SMILES that does not parse when only SMILES fits).
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return e.Msg }

// maxSuggestions is how many "did you mean" names an answer holds.
const maxSuggestions = 5

// Resolve answers what q names. The error is a *QueryError for a query
// that cannot be read; a query that names nothing known is not an error
// (no compounds, and suggestions).
func (r *Resolver) Resolve(q string) (*Resolution, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil, &QueryError{"q: missing value"}
	}
	if len(q) > MaxQueryLength {
		return nil, &QueryError{fmt.Sprintf("q: %d bytes, at most %d", len(q), MaxQueryLength)}
	}
	s := r.snap.Load()
	res := &Resolution{Query: q, Kind: Classify(q), Compounds: []ResolvedCompound{}}
	var hits []*Compound
	switch res.Kind {
	case KindCAS:
		cas, err := CheckCAS(q)
		if err != nil {
			var ce *CASError
			if errors.As(err, &ce) {
				return nil, &QueryError{"q: " + ce.Error()}
			}
			return nil, &QueryError{"q: " + err.Error()}
		}
		hits = s.find(func(l *layer) map[string][]int32 { return l.byCAS }, cas)
	case KindDTXSID:
		hits = s.find(func(l *layer) map[string][]int32 { return l.byDTXSID }, strings.ToUpper(q))
	case KindInChIKey:
		hits = s.find(func(l *layer) map[string][]int32 { return l.byInChI }, q)
	default:
		hits = s.find(func(l *layer) map[string][]int32 { return l.byName }, normName(q))
		if len(hits) == 0 {
			if st, err := Standardize(q); err == nil {
				res.Kind = KindSMILES
				res.Structure = &StructureOut{SMILES: st.SMILES, StructureKey: st.Key, Formula: st.Formula, Source: "query"}
				hits = s.find(func(l *layer) map[string][]int32 { return l.byKey }, st.Key)
			}
		}
	}
	used := map[string]bool{}
	for _, c := range hits {
		rc := ResolvedCompound{Compound: c, MatchedBy: matchedBy(res.Kind, q, c)}
		if c.st != nil {
			rc.Structure = &StructureOut{SMILES: c.st.SMILES, StructureKey: c.st.Key, Formula: c.st.Formula, Source: c.Sources["smiles"]}
		}
		for _, src := range c.Sources {
			used[src] = true
		}
		res.Compounds = append(res.Compounds, rc)
	}
	if res.Structure == nil {
		for _, rc := range res.Compounds {
			if rc.Structure != nil {
				res.Structure = rc.Structure
				break
			}
		}
	}
	if len(res.Compounds) == 0 && (res.Kind == KindName) {
		res.Suggestions = s.suggest(q)
	}
	for id := range used {
		res.Sources = append(res.Sources, s.sources[id])
	}
	sort.Slice(res.Sources, func(i, j int) bool { return res.Sources[i].ID < res.Sources[j].ID })
	if res.Sources == nil {
		res.Sources = []Source{}
	}
	return res, nil
}

// LookupIdentifier resolves q only as a name, synonym, CAS number, DTXSID
// or InChIKey (never parsed as SMILES, so it costs a map lookup): the
// first known compound with a structure, or nil. A CAS number with a wrong
// check digit is a *QueryError.
func (r *Resolver) LookupIdentifier(q string) (*ResolvedCompound, error) {
	q = strings.TrimSpace(q)
	if q == "" || len(q) > MaxQueryLength {
		return nil, nil
	}
	s := r.snap.Load()
	kind := Classify(q)
	var hits []*Compound
	switch kind {
	case KindCAS:
		cas, err := CheckCAS(q)
		if err != nil {
			return nil, &QueryError{err.Error()}
		}
		hits = s.find(func(l *layer) map[string][]int32 { return l.byCAS }, cas)
	case KindDTXSID:
		hits = s.find(func(l *layer) map[string][]int32 { return l.byDTXSID }, strings.ToUpper(q))
	case KindInChIKey:
		hits = s.find(func(l *layer) map[string][]int32 { return l.byInChI }, q)
	default:
		hits = s.find(func(l *layer) map[string][]int32 { return l.byName }, normName(q))
	}
	for _, c := range hits {
		if c.st != nil {
			return &ResolvedCompound{Compound: c, MatchedBy: matchedBy(kind, q, c),
				Structure: &StructureOut{SMILES: c.st.SMILES, StructureKey: c.st.Key, Formula: c.st.Formula, Source: c.Sources["smiles"]}}, nil
		}
	}
	return nil, nil
}

// ResolveStructure returns the structure q stands for: q parsed as SMILES,
// or the structure of the compound it names. A query that names nothing
// with a structure is a *QueryError.
func (r *Resolver) ResolveStructure(q string) (*Structure, *Resolution, error) {
	res, err := r.Resolve(q)
	if err != nil {
		return nil, nil, err
	}
	if res.Kind == KindSMILES {
		st, err := Standardize(q)
		if err != nil {
			return nil, nil, &QueryError{err.Error()}
		}
		return st, res, nil
	}
	for _, rc := range res.Compounds {
		if rc.st != nil {
			return rc.st, res, nil
		}
	}
	msg := fmt.Sprintf("%q is not a SMILES and names no compound with a known structure", q)
	if len(res.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(suggestionNames(res.Suggestions), ", ") + "?"
	}
	return nil, res, &QueryError{msg}
}

func suggestionNames(l []Suggestion) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = fmt.Sprintf("%q", s.Name)
	}
	return out
}

func matchedBy(k Kind, q string, c *Compound) string {
	switch k {
	case KindCAS:
		return "cas"
	case KindDTXSID:
		return "dtxsid"
	case KindInChIKey:
		return "inchikey"
	case KindSMILES:
		return "structure"
	}
	if normName(c.Name) == normName(q) {
		return "preferred_name"
	}
	return "synonym"
}
