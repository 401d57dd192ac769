package chem

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// The Morgan algorithm here follows RDKit's GetMorganFingerprint /
// GetMorganFingerprintAsBitVect (useChirality=false, useBondTypes=true,
// useFeatures=false): ECFP-like connectivity invariants (atomic number,
// total degree, total H count, formal charge, isotope mass delta, ring
// membership) hashed with boost::hash_combine on 32-bit words, environments
// grown one bond shell per iteration, duplicate environments (same bond
// set) dropped, identifiers folded modulo nBits.

const hashMagic = 0x9e3779b9

func hashCombine(seed, v uint32) uint32 {
	return seed ^ (v + hashMagic + (seed << 6) + (seed >> 2))
}

// atomInvariants writes RDKit's getConnectivityInvariants of every atom
// into inv (len(inv) = number of atoms): one loop rather than a call per
// atom, since calls cost much in Go's wasm code.
func (m *Mol) atomInvariants(inv []uint32) {
	atoms, start, nbr, ringCt := m.atoms, m.start, m.nbr, m.atomRingCt
	inv = inv[:len(atoms)]
	for i := range inv {
		a := &atoms[i]
		js := nbr[start[i]:start[i+1]]
		hn := uint32(0) // RDKit counts graph H neighbours in the H count
		for _, j := range js {
			if atoms[j].z == 1 {
				hn++
			}
		}
		th := uint32(a.TotalHs())
		var h uint32
		h = hashCombine(h, uint32(a.z))
		h = hashCombine(h, uint32(len(js))+th)
		h = hashCombine(h, th+hn)
		h = hashCombine(h, uint32(int32(a.charge)))
		delta := int32(0)
		if a.isotope > 0 {
			delta = int32(isotopeMass(int(a.z), int(a.isotope)) - elements[a.z].weight)
		}
		h = hashCombine(h, uint32(delta))
		if ringCt[i] > 0 {
			h = hashCombine(h, 1)
		}
		inv[i] = h
	}
}

// morganScratch holds the working memory of morganIDs; it is pooled so
// that fingerprinting a molecule allocates only its result.
type morganScratch struct {
	cur, next   []uint32
	nbh, round  []uint64 // neighbourhood bond sets per atom: previous round, this round
	dead        []bool
	envs        []morganEnv
	nbrs        []morganNbr
	seenHash    []uint64 // environments already emitted: hash for a quick filter,
	seenWords   []uint64 // words to confirm
	seenTab     []int32  // hash table of seenHash indices + 1
	radixTmp    []uint32 // scratch of sortIDs
	ids         []uint32
	sortScratch []morganEnv
}

type morganEnv struct {
	invar uint32
	atom  int32 // its bond set is round[atom*w:(atom+1)*w]
}

type morganNbr struct {
	bt  int32
	inv uint32
}

var morganPool scratchPool[morganScratch]

func lessWords(a, b []uint64) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// morganIDs returns every environment identifier RDKit would add (radius 0
// first, then each shell), before folding, in s.ids.
func (m *Mol) morganIDs(radius int, s *morganScratch) []uint32 {
	var endsBuf [8]int
	ids, _ := m.morganShells(radius, s, endsBuf[:0])
	return ids
}

// envLess orders environments by bond set, then invariant, then atom.
func envLess(a, b morganEnv, round []uint64, w int) bool {
	if c := lessWords(round[int(a.atom)*w:(int(a.atom)+1)*w], round[int(b.atom)*w:(int(b.atom)+1)*w]); c != 0 {
		return c < 0
	}
	if a.invar != b.invar {
		return a.invar < b.invar
	}
	return a.atom < b.atom
}

// sortEnvs sorts envs with envLess (keys are unique: atoms differ): a
// bottom-up merge sort with runs of insertion sort, without calls per
// comparison beyond envLess. tmp is scratch space, returned grown.
func sortEnvs(envs []morganEnv, round []uint64, w int, tmp []morganEnv) []morganEnv {
	if w == 1 {
		return sortEnvs1(envs, round, tmp)
	}
	n := len(envs)
	const run = 12
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for a := lo + 1; a < hi; a++ {
			for b := a; b > lo && envLess(envs[b], envs[b-1], round, w); b-- {
				envs[b], envs[b-1] = envs[b-1], envs[b]
			}
		}
	}
	if n <= run {
		return tmp
	}
	tmp = grow(tmp, n)
	src, dst := envs, tmp
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if envLess(src[j], src[i], round, w) {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if &src[0] != &envs[0] {
		copy(envs, src)
	}
	return tmp
}

// sortEnvs1 is sortEnvs for bond sets of one word (molecules of at most
// 64 bonds), with the comparison inlined.
func sortEnvs1(envs []morganEnv, round []uint64, tmp []morganEnv) []morganEnv {
	n := len(envs)
	const run = 12
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for a := lo + 1; a < hi; a++ {
			for b := a; b > lo && env1Less(envs[b], envs[b-1], round); b-- {
				envs[b], envs[b-1] = envs[b-1], envs[b]
			}
		}
	}
	if n <= run {
		return tmp
	}
	tmp = grow(tmp, n)
	src, dst := envs, tmp
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if env1Less(src[j], src[i], round) {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			// the rest of the unfinished run: a few elements, which a loop
			// moves for less than a copy's call costs in a wasm module
			for ; i < mid; i++ {
				dst[k] = src[i]
				k++
			}
			for ; j < hi; j++ {
				dst[k] = src[j]
				k++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &envs[0] {
		copy(envs, src)
	}
	return tmp
}

// env1Less is envLess for one-word bond sets.
func env1Less(a, b morganEnv, round []uint64) bool {
	if ra, rb := round[a.atom], round[b.atom]; ra != rb {
		return ra < rb
	}
	if a.invar != b.invar {
		return a.invar < b.invar
	}
	return a.atom < b.atom
}

// hashWords is a 64-bit FNV-1a style hash of a word slice.
func hashWords(words []uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range words {
		h ^= x
		h *= 1099511628211
		h ^= h >> 29
	}
	return h
}

// BitVec is a fixed-size bit vector (a folded fingerprint).
type BitVec struct {
	n     int
	words []uint64
}

// NewBitVec returns an all-zero vector of n bits.
func NewBitVec(n int) *BitVec {
	if n <= 2048 {
		// one allocation for the common sizes
		v := &struct {
			b BitVec
			w [32]uint64
		}{}
		v.b = BitVec{n: n, words: v.w[:(n+63)/64]}
		return &v.b
	}
	return &BitVec{n: n, words: make([]uint64, (n+63)/64)}
}

// Len returns the number of bits.
func (b *BitVec) Len() int { return b.n }

// Set turns bit i on.
func (b *BitVec) Set(i int) { b.words[i/64] |= 1 << (uint(i) % 64) }

// Get reports whether bit i is on.
func (b *BitVec) Get(i int) bool { return b.words[i/64]&(1<<(uint(i)%64)) != 0 }

// Count returns the number of on bits.
func (b *BitVec) Count() int {
	c := 0
	for _, w := range b.words {
		c += bits.OnesCount64(w)
	}
	return c
}

// Words returns the packed 64-bit words (bit i is bit i%64 of word i/64).
// The slice is shared with the vector.
func (b *BitVec) Words() []uint64 { return b.words }

// OnBits returns the indices of the on bits in ascending order.
func (b *BitVec) OnBits() []int {
	out := make([]int, 0, b.Count())
	for wi, w := range b.words {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			out = append(out, wi*64+t)
			w &= w - 1
		}
	}
	return out
}

// String returns the on bits as a space-separated list (the format of the
// reference file), e.g. "2 59 80".
func (b *BitVec) String() string {
	var sb strings.Builder
	for k, i := range b.OnBits() {
		if k > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(i))
	}
	return sb.String()
}

// ParseOnBits builds an n-bit vector from a space-separated list of on-bit
// indices (the inverse of String).
func ParseOnBits(n int, s string) (*BitVec, error) {
	b := NewBitVec(n)
	for _, f := range strings.Fields(s) {
		i, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("chem: bad on-bit %q: %w", f, err)
		}
		if i < 0 || i >= n {
			return nil, fmt.Errorf("chem: on-bit %d out of range [0,%d)", i, n)
		}
		b.Set(i)
	}
	return b, nil
}

// MarshalBinary encodes the vector as a little-endian uint32 bit count
// followed by the packed little-endian uint64 words.
func (b *BitVec) MarshalBinary() ([]byte, error) {
	out := make([]byte, 4+8*len(b.words))
	binary.LittleEndian.PutUint32(out, uint32(b.n))
	for i, w := range b.words {
		binary.LittleEndian.PutUint64(out[4+8*i:], w)
	}
	return out, nil
}

// UnmarshalBinary decodes the MarshalBinary format.
func (b *BitVec) UnmarshalBinary(data []byte) error {
	if len(data) < 4 {
		return errors.New("chem: bit vector data too short")
	}
	n := int(binary.LittleEndian.Uint32(data))
	nw := (n + 63) / 64
	if len(data) != 4+8*nw {
		return fmt.Errorf("chem: bit vector of %d bits needs %d bytes, got %d", n, 4+8*nw, len(data))
	}
	b.n = n
	b.words = make([]uint64, nw)
	for i := range b.words {
		b.words[i] = binary.LittleEndian.Uint64(data[4+8*i:])
	}
	if r := n % 64; r != 0 && b.words[nw-1]>>uint(r) != 0 {
		return errors.New("chem: bit vector has bits set beyond its length")
	}
	return nil
}

// MarshalText encodes the vector as base64 of MarshalBinary (compact in
// JSON documents).
func (b *BitVec) MarshalText() ([]byte, error) {
	raw, _ := b.MarshalBinary()
	out := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	base64.StdEncoding.Encode(out, raw)
	return out, nil
}

// UnmarshalText decodes the MarshalText format.
func (b *BitVec) UnmarshalText(text []byte) error {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Decode(raw, text)
	if err != nil {
		return fmt.Errorf("chem: bit vector text: %w", err)
	}
	return b.UnmarshalBinary(raw[:n])
}

// Morgan returns the Morgan (ECFP-like) fingerprint of m folded to nBits
// bits, bit-compatible with RDKit's GetMorganFingerprintAsBitVect(m,
// radius, nBits). radius 2 corresponds to ECFP4.
func Morgan(m *Mol, radius, nBits int) *BitVec {
	if nBits <= 0 {
		nBits = 2048
	}
	b := NewBitVec(nBits)
	sc := morganPool.get()
	for _, id := range m.morganIDs(radius, sc) {
		b.Set(int(id % uint32(nBits)))
	}
	morganPool.put(sc)
	return b
}

// CountVec is a sparse vector of feature counts with sorted indices.
type CountVec struct {
	N      int      // dimension (2^32 for unfolded identifiers)
	Idx    []uint32 // ascending feature indices
	Counts []uint32 // count of each feature
}

// MorganCounts returns Morgan environment counts: folded modulo nBits like
// RDKit's GetHashedMorganFingerprint, or unfolded 32-bit identifiers like
// GetMorganFingerprint when nBits is 0.
func MorganCounts(m *Mol, radius, nBits int) *CountVec {
	sc := morganPool.get()
	defer morganPool.put(sc)
	return countVec(m.morganIDs(radius, sc), nBits, sc)
}

// countVec counts environment identifiers, folded modulo nBits when nBits >
// 0 (ids is folded and sorted in place).
func countVec(ids []uint32, nBits int, sc *morganScratch) *CountVec {
	if nBits > 0 {
		for k, id := range ids {
			ids[k] = id % uint32(nBits)
		}
	}
	sortIDs(ids, nBits, sc)
	cv := &CountVec{N: nBits, Idx: make([]uint32, 0, len(ids)), Counts: make([]uint32, 0, len(ids))}
	if nBits <= 0 {
		cv.N = 1 << 32
	}
	for _, id := range ids {
		if k := len(cv.Idx); k > 0 && cv.Idx[k-1] == id {
			cv.Counts[k-1]++
			continue
		}
		cv.Idx = append(cv.Idx, id)
		cv.Counts = append(cv.Counts, 1)
	}
	return cv
}

// Dense expands a folded count vector into a slice of length N (N must be
// small enough to allocate, e.g. 2048).
func (c *CountVec) Dense() []float64 {
	out := make([]float64, c.N)
	for k, i := range c.Idx {
		out[i] = float64(c.Counts[k])
	}
	return out
}

func popAnd(a, b *BitVec) (and, na, nb int) {
	for i := range a.words {
		and += bits.OnesCount64(a.words[i] & b.words[i])
		na += bits.OnesCount64(a.words[i])
		nb += bits.OnesCount64(b.words[i])
	}
	return
}

// Tanimoto returns |a∧b| / |a∨b| (0 when both are empty). Vectors must have
// the same length.
func Tanimoto(a, b *BitVec) float64 {
	if a.n != b.n {
		panic("chem: Tanimoto of bit vectors with different lengths")
	}
	and, na, nb := popAnd(a, b)
	if na+nb-and == 0 {
		return 0
	}
	return float64(and) / float64(na+nb-and)
}

// Dice returns 2|a∧b| / (|a|+|b|) (0 when both are empty).
func Dice(a, b *BitVec) float64 {
	if a.n != b.n {
		panic("chem: Dice of bit vectors with different lengths")
	}
	and, na, nb := popAnd(a, b)
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(and) / float64(na+nb)
}

func countOverlap(a, b *CountVec) (minSum, sa, sb float64) {
	i, j := 0, 0
	for i < len(a.Idx) || j < len(b.Idx) {
		switch {
		case j >= len(b.Idx) || (i < len(a.Idx) && a.Idx[i] < b.Idx[j]):
			sa += float64(a.Counts[i])
			i++
		case i >= len(a.Idx) || b.Idx[j] < a.Idx[i]:
			sb += float64(b.Counts[j])
			j++
		default:
			x, y := float64(a.Counts[i]), float64(b.Counts[j])
			sa += x
			sb += y
			if x < y {
				minSum += x
			} else {
				minSum += y
			}
			i++
			j++
		}
	}
	return
}

// TanimotoCounts is the count-based Tanimoto (RDKit TanimotoSimilarity on
// SparseIntVect): Σmin / (Σa + Σb − Σmin).
func TanimotoCounts(a, b *CountVec) float64 {
	mn, sa, sb := countOverlap(a, b)
	if sa+sb-mn == 0 {
		return 0
	}
	return mn / (sa + sb - mn)
}

// DiceCounts is the count-based Dice similarity: 2Σmin / (Σa + Σb).
func DiceCounts(a, b *CountVec) float64 {
	mn, sa, sb := countOverlap(a, b)
	if sa+sb == 0 {
		return 0
	}
	return 2 * mn / (sa + sb)
}
