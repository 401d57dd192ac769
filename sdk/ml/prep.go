package ml

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"toxgate/sdk/chem"
)

// Standardize parses smiles, keeps its largest fragment (by heavy atoms; the
// first one on ties), which strips counter-ions and solvents, and neutralises
// charged acids and protonated bases (see Neutralize), so that a salt, a
// charge state and the neutral parent give the same features. Parse errors are
// *chem.ParseError with positions relative to the whole input string.
func Standardize(smiles string) (*chem.Mol, error) {
	m, err := largestFragment(smiles)
	if err != nil {
		return nil, err
	}
	if n := Neutralize(m); n != "" {
		if nm, err := chem.ParseSMILES(n); err == nil {
			return nm, nil
		}
	}
	return m, nil
}

// Neutralize returns the molecule's SMILES with deprotonated acids ([O-],
// [S-], [N-], [n-]) protonated and protonated nitrogens ([NH+], [nH+], ...)
// deprotonated, or "" when there is nothing to change. Atoms bonded to an
// opposite charge (nitro groups, N-oxides), quaternary ammonium and atoms
// with isotopes, chirality or classes are left as written.
func Neutralize(m *chem.Mol) string {
	s := m.SMILES()
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for i := 0; i < m.NumAtoms(); i++ {
		if m.AtomCharge(i) == 0 {
			continue // most atoms; Atom(i) builds a whole view
		}
		a := m.Atom(i)
		if !a.Bracket || a.Charge == 0 || a.Isotope != 0 || a.Radicals != 0 || a.Chiral != chem.ChiralNone || a.Class != 0 {
			continue
		}
		opposite := false
		for _, j := range m.Neighbors(i) {
			if m.AtomCharge(int(j))*a.Charge < 0 {
				opposite = true
			}
		}
		if opposite {
			continue
		}
		h := 0
		switch {
		case a.Charge == -1 && (a.AtomicNum == 8 || a.AtomicNum == 16 || a.AtomicNum == 7):
			h = a.ExplicitHs + 1
		case a.Charge == 1 && a.AtomicNum == 7 && a.ExplicitHs > 0:
			h = a.ExplicitHs - 1
		default:
			continue
		}
		end := strings.IndexByte(s[a.Pos:], ']')
		if end < 0 || s[a.Pos] != '[' {
			continue
		}
		sym := a.Symbol()
		if a.Aromatic {
			sym = strings.ToLower(sym)
		}
		text := "[" + sym
		switch {
		case h == 1:
			text += "H"
		case h > 1:
			text += "H" + itoa(h)
		}
		edits = append(edits, edit{a.Pos, a.Pos + end + 1, text + "]"})
	}
	if len(edits) == 0 {
		return ""
	}
	var b strings.Builder
	last := 0
	for _, e := range edits { // atoms are in input order
		b.WriteString(s[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// largestFragment parses smiles and keeps its largest fragment.
func largestFragment(smiles string) (*chem.Mol, error) {
	s := strings.TrimSpace(smiles)
	lead := strings.Index(smiles, s)
	if s == "" {
		return nil, &chem.ParseError{Pos: 0, Reason: "empty SMILES"}
	}
	if strings.IndexByte(s, '.') < 0 { // one fragment (most inputs)
		m, err := chem.ParseSMILES(s)
		return m, shiftErr(err, lead)
	}
	frags, offs := splitFragments(s)
	if len(frags) <= 1 {
		m, err := chem.ParseSMILES(s)
		return m, shiftErr(err, lead)
	}
	var best *chem.Mol
	for i, f := range frags {
		m, err := chem.ParseSMILES(f)
		if err != nil {
			// A ring bond may span a dot ("C1.C1"): read the whole string.
			whole, werr := chem.ParseSMILES(s)
			if werr == nil {
				return whole, nil
			}
			return nil, shiftErr(err, lead+offs[i])
		}
		if best == nil || m.NumHeavyAtoms() > best.NumHeavyAtoms() {
			best = m
		}
	}
	return best, nil
}

// splitFragments splits a SMILES at the dots outside bracket atoms.
func splitFragments(s string) (frags []string, offs []int) {
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				frags, offs = append(frags, s[start:i]), append(offs, start)
				start = i + 1
			}
		}
	}
	return append(frags, s[start:]), append(offs, start)
}

func shiftErr(err error, by int) error {
	var pe *chem.ParseError
	if by != 0 && errors.As(err, &pe) {
		return &chem.ParseError{Pos: pe.Pos + by, Reason: pe.Reason}
	}
	return err
}

// MolKey returns an identity key of the molecule's constitution (stereo and
// isotopes ignored): the formula plus a hash of its unfolded radius-4 Morgan
// environments. Two records with the same key are treated as duplicates.
func MolKey(m *chem.Mol) string {
	cv := chem.MorganCounts(m, 4, 0)
	h := fnv.New64a()
	var b [8]byte
	for k, id := range cv.Idx {
		c := cv.Counts[k]
		b[0], b[1], b[2], b[3] = byte(id), byte(id>>8), byte(id>>16), byte(id>>24)
		b[4], b[5], b[6], b[7] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		h.Write(b[:])
	}
	return fmt.Sprintf("%s/%016x", m.Formula(), h.Sum64())
}
