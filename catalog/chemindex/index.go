package chemindex

import (
	"container/heap"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/bits"
	"runtime"
	"sort"
	"sync"

	"toxgate/sdk/chem"
)

// Row is one row of a table with a SMILES value.
type Row struct {
	ID     int64
	SMILES string
}

// segment is the index of one table column: rows sorted by fingerprint
// bit count, so a similarity search reads only the counts its threshold
// allows (Tanimoto(a, b) ≤ min(|a|,|b|) / max(|a|,|b|)).
type segment struct {
	resource string
	column   string
	fps      []uint64 // fpWords per row
	counts   []uint16
	start    []int32 // start[c] = first row with count ≥ c, len FPBits+2
	rowIDs   []int64
	keys     []uint64 // first 8 bytes of the structure key
	smiles   []string
	invalid  int // rows whose SMILES did not parse
	// substructure: each row's molecule in sdk/chem's compact form
	// (graphs[goff[i]:goff[i+1]]) and its screen counts (featWords words)
	graphs []byte
	goff   []uint32
	feats  []uint64
}

// Index holds the standardized structures of every indexed table column.
// Tables are replaced whole (SetTable) and dropped (DropTable); searches
// read them under a read lock.
type Index struct {
	mu   sync.RWMutex
	segs map[string]*segment
	rows int
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{segs: map[string]*segment{}} }

// keyBits is the first 8 bytes of a structure key as a number.
func keyBits(key string) uint64 {
	b, err := hex.DecodeString(key)
	if err != nil || len(b) < 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// PreparedRow is a row with its structure, ready for the index.
type PreparedRow struct {
	ID     int64
	SMILES string
	st     *Structure
}

// Prepare standardizes rows (a row whose SMILES does not parse is left out
// and counted in the second result).
func Prepare(rows []Row) ([]PreparedRow, int) {
	out := make([]PreparedRow, 0, len(rows))
	bad := 0
	for _, r := range rows {
		st, err := Standardize(r.SMILES)
		if err != nil {
			bad++
			continue
		}
		out = append(out, PreparedRow{ID: r.ID, SMILES: r.SMILES, st: st})
	}
	return out, bad
}

// SetTable replaces the index of resource's table with rows (column names
// the SMILES column); invalid is the number of rows left out.
func (ix *Index) SetTable(resource, column string, rows []PreparedRow, invalid int) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].st.FP.Count() < rows[j].st.FP.Count() })
	seg := &segment{resource: resource, column: column, invalid: invalid,
		fps: make([]uint64, 0, len(rows)*fpWords), counts: make([]uint16, len(rows)),
		rowIDs: make([]int64, len(rows)), keys: make([]uint64, len(rows)), smiles: make([]string, len(rows)),
		start: make([]int32, FPBits+2), goff: make([]uint32, 1, len(rows)+1), feats: make([]uint64, 0, len(rows)*featWords)}
	size := 0
	for _, r := range rows {
		size += len(r.st.target)
	}
	seg.graphs = make([]byte, 0, size)
	hist := make([]int32, FPBits+2)
	for i, r := range rows {
		seg.fps = append(seg.fps, r.st.FP[:]...)
		c := r.st.FP.Count()
		seg.counts[i] = uint16(c)
		hist[c+1]++
		seg.rowIDs[i] = r.ID
		seg.keys[i] = keyBits(r.st.Key)
		seg.smiles[i] = r.SMILES
		seg.graphs = append(seg.graphs, r.st.target...)
		seg.goff = append(seg.goff, uint32(len(seg.graphs)))
		seg.feats = appendFeatureWords(seg.feats, &r.st.feat)
	}
	for c := 1; c < len(hist); c++ {
		hist[c] += hist[c-1]
	}
	copy(seg.start, hist)
	ix.mu.Lock()
	if old := ix.segs[resource]; old != nil {
		ix.rows -= len(old.rowIDs)
	}
	ix.segs[resource] = seg
	ix.rows += len(rows)
	ix.mu.Unlock()
}

// DropTable removes resource's table from the index.
func (ix *Index) DropTable(resource string) {
	ix.mu.Lock()
	if old := ix.segs[resource]; old != nil {
		ix.rows -= len(old.rowIDs)
		delete(ix.segs, resource)
	}
	ix.mu.Unlock()
}

// Rows is the number of indexed rows.
func (ix *Index) Rows() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.rows
}

// TableInfo describes one indexed table.
type TableInfo struct {
	Resource string `json:"resource_id"`
	Column   string `json:"column"`
	Rows     int    `json:"rows"`
	Invalid  int    `json:"invalid_smiles"`
}

// Tables lists the indexed tables.
func (ix *Index) Tables() []TableInfo {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]TableInfo, 0, len(ix.segs))
	for _, s := range ix.segs {
		out = append(out, TableInfo{Resource: s.resource, Column: s.column, Rows: len(s.rowIDs), Invalid: s.invalid})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// Mode is a kind of structure search.
type Mode string

// The search modes.
const (
	ModeExact      Mode = "exact"
	ModeSimilarity Mode = "similarity"
	// ModeSubstructure answers the rows whose molecule (every fragment)
	// holds Query.Pattern.
	ModeSubstructure Mode = "substructure"
)

// Query is a structure search.
type Query struct {
	Structure *Structure
	Mode      Mode
	// Threshold is the least Tanimoto similarity (similarity mode).
	Threshold float64
	// Limit is the most hits answered.
	Limit int
	// Allow reports whether the caller may read a resource's table.
	Allow func(resource string) bool
	// NoPrefilter scans every row (the baseline the benchmark compares).
	NoPrefilter bool
	// Pattern is the substructure pattern (substructure mode); Structure
	// may then be nil, else hits carry their similarity to it.
	Pattern *chem.Query
	// Steps bounds the search steps of a substructure search over every
	// row (shared out among the cores that run it); past it the search
	// ends with chem.ErrStepBudget in Result.Err.
	Steps int64
}

// Hit is a matching row.
type Hit struct {
	Resource   string  `json:"resource_id"`
	Column     string  `json:"column"`
	RowID      int64   `json:"_id"`
	SMILES     string  `json:"smiles"`
	Similarity float64 `json:"similarity"`
}

// Result is the answer of Search.
type Result struct {
	Hits []Hit
	// Total is the number of matching rows (hits beyond Limit included).
	Total int
	// Err is chem.ErrStepBudget when a substructure search ran out of
	// steps (Hits and Total are then incomplete).
	Err error
}

// parallelRows is the index size from which a search runs on every core.
const parallelRows = 200000

// Search answers the rows matching q, best first (similarity, then
// resource and row id). A large index is searched on every core, the
// tables shared out among them.
func (ix *Index) Search(q Query) Result {
	ix.mu.RLock()
	segs := make([]*segment, 0, len(ix.segs))
	rows := 0
	for _, s := range ix.segs {
		if q.Allow == nil || q.Allow(s.resource) {
			segs = append(segs, s)
			rows += len(s.rowIDs)
		}
	}
	ix.mu.RUnlock()
	workers := runtime.GOMAXPROCS(0)
	if rows < parallelRows || workers < 2 || len(segs) < 2 {
		h := &hitHeap{}
		total := 0
		w := newWorker(&q, q.Steps)
		for _, s := range segs {
			total += s.search(&q, h, w)
		}
		return Result{Hits: h.sorted(), Total: total, Err: w.err}
	}
	// the largest tables first, each to the least loaded worker
	sort.Slice(segs, func(i, j int) bool { return len(segs[i].rowIDs) > len(segs[j].rowIDs) })
	parts := make([][]*segment, workers)
	load := make([]int, workers)
	for _, s := range segs {
		w := 0
		for k := range load {
			if load[k] < load[w] {
				w = k
			}
		}
		parts[w] = append(parts[w], s)
		load[w] += len(s.rowIDs)
	}
	heaps := make([]hitHeap, workers)
	totals := make([]int, workers)
	scratch := make([]*worker, workers)
	var wg sync.WaitGroup
	for w := range parts {
		scratch[w] = newWorker(&q, q.Steps/int64(workers))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, s := range parts[w] {
				totals[w] += s.search(&q, &heaps[w], scratch[w])
			}
		}()
	}
	wg.Wait()
	h := &hitHeap{}
	total := 0
	var err error
	for w := range heaps {
		if scratch[w].err != nil {
			err = scratch[w].err
		}
		total += totals[w]
		for _, hh := range heaps[w] {
			h.offer(hh, q.Limit)
		}
	}
	return Result{Hits: h.sorted(), Total: total, Err: err}
}

// search adds the segment's matches to h (the best q.Limit kept) and
// returns how many rows matched.
func (s *segment) search(q *Query, h *hitHeap, w *worker) int {
	if q.Mode == ModeSubstructure {
		return s.searchSub(q, h, w)
	}
	qfp := (*[fpWords]uint64)(&q.Structure.FP)
	qc := q.Structure.FP.Count()
	key := keyBits(q.Structure.Key)
	lo, hi := 0, len(s.rowIDs)
	if q.Mode == ModeExact {
		lo, hi = int(s.start[qc]), int(s.start[qc+1])
	} else if !q.NoPrefilter && q.Threshold > 0 {
		minC := int(math.Ceil(q.Threshold*float64(qc) - 1e-9))
		maxC := int(math.Floor(float64(qc)/q.Threshold + 1e-9))
		minC = max(minC, 0)
		maxC = min(maxC, FPBits)
		lo, hi = int(s.start[minC]), int(s.start[maxC+1])
	}
	total := 0
	th := q.Threshold
	for i := lo; i < hi; i++ {
		var sim float64
		if q.Mode == ModeExact {
			if s.keys[i] != key {
				continue
			}
			sim = 1
		} else {
			and, or := andOr(qfp, (*[fpWords]uint64)(s.fps[i*fpWords:]))
			switch {
			case or == 0:
				sim = 1
			case float64(and) < th*float64(or):
				continue
			default:
				sim = float64(and) / float64(or)
			}
		}
		total++
		h.offerLazy(Hit{Resource: s.resource, Column: s.column, RowID: s.rowIDs[i], Similarity: sim}, q.Limit, s.smiles[i])
	}
	return total
}

// andOr counts the bits of a∧b and a∨b.
func andOr(a, b *[fpWords]uint64) (and, or int) {
	for i := 0; i < fpWords; i += 4 {
		and += bits.OnesCount64(a[i]&b[i]) + bits.OnesCount64(a[i+1]&b[i+1]) + bits.OnesCount64(a[i+2]&b[i+2]) + bits.OnesCount64(a[i+3]&b[i+3])
		or += bits.OnesCount64(a[i]|b[i]) + bits.OnesCount64(a[i+1]|b[i+1]) + bits.OnesCount64(a[i+2]|b[i+2]) + bits.OnesCount64(a[i+3]|b[i+3])
	}
	return and, or
}

// offer keeps hh when it is among the best limit hits.
func (h *hitHeap) offer(hh Hit, limit int) { h.offerLazy(hh, limit, hh.SMILES) }

// offerLazy is offer that sets the hit's SMILES only when it is kept.
func (h *hitHeap) offerLazy(hh Hit, limit int, smiles string) {
	if h.Len() < limit {
		hh.SMILES = smiles
		heap.Push(h, hh)
	} else if limit > 0 && better(hh, (*h)[0]) {
		hh.SMILES = smiles
		(*h)[0] = hh
		heap.Fix(h, 0)
	}
}

// sorted empties h into a list, best first.
func (h *hitHeap) sorted() []Hit {
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	return out
}

// better orders hits: higher similarity, then resource, then row id.
func better(a, b Hit) bool {
	if a.Similarity != b.Similarity {
		return a.Similarity > b.Similarity
	}
	if a.Resource != b.Resource {
		return a.Resource < b.Resource
	}
	return a.RowID < b.RowID
}

// hitHeap is a min-heap of the best hits so far (the worst on top).
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Resources lists the tables (among those q.Allow accepts) with at least
// one row matching q; q.Limit is not used.
func (ix *Index) Resources(q Query) []string {
	ix.mu.RLock()
	segs := make([]*segment, 0, len(ix.segs))
	for _, s := range ix.segs {
		if q.Allow == nil || q.Allow(s.resource) {
			segs = append(segs, s)
		}
	}
	ix.mu.RUnlock()
	q.Limit = 1
	var out []string
	w := newWorker(&q, q.Steps)
	for _, s := range segs {
		h := &hitHeap{}
		if s.search(&q, h, w) > 0 {
			out = append(out, s.resource)
		}
	}
	sort.Strings(out)
	return out
}
