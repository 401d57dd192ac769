package chemindex

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"sort"
	"strings"

	"toxgate/sdk/chem"
)

// FPBits is the length of the indexed fingerprints: Morgan radius 2 folded
// to 2048 bits, RDKit's GetMorganFingerprintAsBitVect(m, 2, 2048).
const FPBits = 2048

// fpWords is FPBits in 64-bit words.
const fpWords = FPBits / 64

// Fingerprint is a Morgan bit vector as packed words.
type Fingerprint [fpWords]uint64

// Count is the number of bits set.
func (f *Fingerprint) Count() int {
	n := 0
	for _, w := range f {
		n += bits.OnesCount64(w)
	}
	return n
}

// Tanimoto is |a∧b| / |a∨b| (1 for two empty vectors).
func Tanimoto(a, b *Fingerprint) float64 {
	and, or := 0, 0
	for i := range a {
		and += bits.OnesCount64(a[i] & b[i])
		or += bits.OnesCount64(a[i] | b[i])
	}
	if or == 0 {
		return 1
	}
	return float64(and) / float64(or)
}

// Structure is a parsed, standardized molecule with its search keys.
type Structure struct {
	// SMILES is the standardized input: the largest fragment (by heavy
	// atoms) of the SMILES as written, salts and solvents left out.
	SMILES string
	// Key identifies the connectivity of the parent fragment: a hash of
	// its formula and its unfolded Morgan environments to radius 6
	// (stereo and isotopes of the input are not considered beyond what
	// the Morgan invariants hold). Equal structures have equal keys.
	Key string
	// Formula is the parent fragment's molecular formula.
	Formula string
	// FP is the parent fragment's Morgan fingerprint.
	FP Fingerprint

	// target is the whole molecule (every fragment) in sdk/chem's compact
	// form for substructure matching, feat its screen counts.
	target []byte
	feat   chem.Features
}

// keyRadius is the Morgan radius of the connectivity key.
const keyRadius = 6

// Standardize parses smiles, keeps its largest fragment and computes the
// keys. Errors name the position in the input.
func Standardize(smiles string) (*Structure, error) {
	smiles = strings.TrimSpace(smiles)
	if smiles == "" {
		return nil, fmt.Errorf("empty SMILES")
	}
	if len(smiles) > MaxQueryLength {
		return nil, fmt.Errorf("SMILES of %d bytes, at most %d", len(smiles), MaxQueryLength)
	}
	parent, m, whole, err := largestFragment(smiles)
	if err != nil {
		return nil, err
	}
	tg := chem.NewTarget(whole)
	st := &Structure{SMILES: parent, Formula: m.Formula(), target: tg.AppendBinary(nil), feat: tg.Features()}
	fp := chem.Morgan(m, 2, FPBits)
	copy(st.FP[:], fp.Words())
	st.Key = connectivityKey(m, st.Formula)
	return st, nil
}

// largestFragment parses s and returns the fragment with the most heavy
// atoms (the first of equals), as text and molecule, and the whole
// molecule. A SMILES whose fragments do not parse alone (a ring bond
// across a dot) is kept whole.
func largestFragment(s string) (string, *chem.Mol, *chem.Mol, error) {
	whole, err := chem.ParseSMILES(s)
	if err != nil {
		return "", nil, nil, err
	}
	if !strings.Contains(s, ".") {
		return s, whole, whole, nil
	}
	best, bestMol, bestN := "", (*chem.Mol)(nil), -1
	for _, part := range strings.Split(s, ".") {
		m, err := chem.ParseSMILES(part)
		if err != nil {
			return s, whole, whole, nil
		}
		if n := m.NumHeavyAtoms(); n > bestN {
			best, bestMol, bestN = part, m, n
		}
	}
	return best, bestMol, whole, nil
}

// connectivityKey hashes the formula and the sorted unfolded Morgan
// environment counts of m.
func connectivityKey(m *chem.Mol, formula string) string {
	c := chem.MorganCounts(m, keyRadius, 0)
	type kv struct{ id, n uint32 }
	l := make([]kv, len(c.Idx))
	for i := range c.Idx {
		l[i] = kv{c.Idx[i], c.Counts[i]}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].id < l[j].id })
	h := sha256.New()
	h.Write([]byte(formula))
	var b [8]byte
	for _, e := range l {
		binary.LittleEndian.PutUint32(b[:4], e.id)
		binary.LittleEndian.PutUint32(b[4:], e.n)
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// LooksLikeSMILES reports whether a sample of a column's values reads as
// SMILES: at least 80% of the non-empty values parse, and some hold a
// branch, bond, ring or bracket character (so a column of element
// symbols or words is not taken).
func LooksLikeSMILES(values []string) bool {
	n, ok, marked := 0, 0, false
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		n++
		if len(v) > MaxQueryLength || strings.ContainsAny(v, " \t") {
			continue
		}
		if _, err := chem.ParseSMILES(v); err == nil {
			ok++
			if strings.ContainsAny(v, "()=#[]123456789") {
				marked = true
			}
		}
	}
	return n > 0 && marked && ok*5 >= n*4
}
