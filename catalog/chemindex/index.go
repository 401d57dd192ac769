package chemindex

import (
	"container/heap"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/bits"
	"sort"
	"sync"
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
		start: make([]int32, FPBits+2)}
	hist := make([]int32, FPBits+2)
	for i, r := range rows {
		seg.fps = append(seg.fps, r.st.FP[:]...)
		c := r.st.FP.Count()
		seg.counts[i] = uint16(c)
		hist[c+1]++
		seg.rowIDs[i] = r.ID
		seg.keys[i] = keyBits(r.st.Key)
		seg.smiles[i] = r.SMILES
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
}

// Search answers the rows matching q, best first (similarity, then
// resource and row id).
func (ix *Index) Search(q Query) Result {
	ix.mu.RLock()
	segs := make([]*segment, 0, len(ix.segs))
	for _, s := range ix.segs {
		if q.Allow == nil || q.Allow(s.resource) {
			segs = append(segs, s)
		}
	}
	ix.mu.RUnlock()
	h := &hitHeap{}
	total := 0
	qfp := &q.Structure.FP
	qc := qfp.Count()
	key := keyBits(q.Structure.Key)
	for _, s := range segs {
		lo, hi := 0, len(s.rowIDs)
		if q.Mode == ModeExact {
			lo, hi = int(s.start[qc]), int(s.start[qc+1])
		} else if !q.NoPrefilter && q.Threshold > 0 {
			minC := int(math.Ceil(q.Threshold*float64(qc) - 1e-9))
			maxC := int(math.Floor(float64(qc)/q.Threshold + 1e-9))
			if maxC > FPBits {
				maxC = FPBits
			}
			lo, hi = int(s.start[minC]), int(s.start[maxC+1])
		}
		for i := lo; i < hi; i++ {
			var sim float64
			if q.Mode == ModeExact {
				if s.keys[i] != key {
					continue
				}
				sim = 1
			} else {
				sim = tanimotoWords(qfp, s.fps[i*fpWords:(i+1)*fpWords:(i+1)*fpWords])
				if sim < q.Threshold {
					continue
				}
			}
			total++
			hh := Hit{Resource: s.resource, Column: s.column, RowID: s.rowIDs[i], Similarity: sim}
			if h.Len() < q.Limit {
				hh.SMILES = s.smiles[i]
				heap.Push(h, hh)
			} else if q.Limit > 0 && better(hh, (*h)[0]) {
				hh.SMILES = s.smiles[i]
				(*h)[0] = hh
				heap.Fix(h, 0)
			}
		}
	}
	out := make([]Hit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Hit)
	}
	return Result{Hits: out, Total: total}
}

// tanimotoWords is Tanimoto of a and one row's words.
func tanimotoWords(a *Fingerprint, b []uint64) float64 {
	and, or := 0, 0
	for i := 0; i < fpWords; i++ {
		x, y := a[i], b[i]
		and += bits.OnesCount64(x & y)
		or += bits.OnesCount64(x | y)
	}
	if or == 0 {
		return 1
	}
	return float64(and) / float64(or)
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
