package chem

import (
	"math"
	"strconv"
	"strings"
)

// Wildman–Crippen atom types and contributions (S. A. Wildman and G. M.
// Crippen, J. Chem. Inf. Comput. Sci. 1999, 39, 868-873), with the SMARTS
// definitions and ordering RDKit uses (Crippen.txt). An atom takes the first
// type whose pattern matches with the atom as its first pattern atom;
// hydrogens are typed as explicit atoms. Columns: type, SMARTS, logP, MR.
const crippenData = `
C1	[CH4]	0.1441	2.503
C1	[CH3]C	0.1441	2.503
C1	[CH2](C)C	0.1441	2.503
C2	[CH](C)(C)C	0	2.433
C2	[C](C)(C)(C)C	0	2.433
C3	[CH3][N,O,P,S,F,Cl,Br,I]	-0.2035	2.753
C3	[CH2X4]([N,O,P,S,F,Cl,Br,I])[A;!#1]	-0.2035	2.753
C4	[CH1X4]([N,O,P,S,F,Cl,Br,I])([A;!#1])[A;!#1]	-0.2051	2.731
C4	[CH0X4]([N,O,P,S,F,Cl,Br,I])([A;!#1])([A;!#1])[A;!#1]	-0.2051	2.731
C5	[C]=[!C;A;!#1]	-0.2783	5.007
C6	[CH2]=C	0.1551	3.513
C6	[CH1](=C)[A;!#1]	0.1551	3.513
C6	[CH0](=C)([A;!#1])[A;!#1]	0.1551	3.513
C6	[C](=C)=C	0.1551	3.513
C7	[CX2]#[A;!#1]	0.0017	3.888
C8	[CH3]c	0.08452	2.464
C9	[CH3]a	-0.1444	2.412
C10	[CH2X4]a	-0.0516	2.488
C11	[CHX4]a	0.1193	2.582
C12	[CH0X4]a	-0.0967	2.576
C13	[cH0]-[A;!C;!N;!O;!S;!F;!Cl;!Br;!I;!#1]	-0.5443	4.041
C14	[c][#9]	0	3.257
C15	[c][#17]	0.245	3.564
C16	[c][#35]	0.198	3.18
C17	[c][#53]	0	3.104
C18	[cH]	0.1581	3.35
C19	[c](:a)(:a):a	0.2955	4.346
C20	[c](:a)(:a)-a	0.2713	3.904
C21	[c](:a)(:a)-C	0.136	3.509
C22	[c](:a)(:a)-N	0.4619	4.067
C23	[c](:a)(:a)-O	0.5437	3.853
C24	[c](:a)(:a)-S	0.1893	2.673
C25	[c](:a)(:a)=[C,N,O]	-0.8186	3.135
C26	[C](=C)(a)[A;!#1]	0.264	4.305
C26	[C](=C)(c)a	0.264	4.305
C26	[CH1](=C)a	0.264	4.305
C26	[C]=c	0.264	4.305
C27	[CX4][A;!C;!N;!O;!P;!S;!F;!Cl;!Br;!I;!#1]	0.2148	2.693
CS	[#6]	0.08129	3.243
H1	[#1][#6,#1]	0.123	1.057
H2	[#1]O[CX4,c]	-0.2677	1.395
H2	[#1]O[!C;!N;!O;!S]	-0.2677	1.395
H2	[#1][!#6;!#7;!#8]	-0.2677	1.395
H3	[#1][#7]	0.2142	0.9627
H3	[#1]O[#7]	0.2142	0.9627
H4	[#1]OC=[#6,#7,O,S]	0.298	1.805
H4	[#1]O[O,S]	0.298	1.805
HS	[#1]	0.1125	1.112
N1	[NH2+0][A;!#1]	-1.019	2.262
N2	[NH+0]([A;!#1])[A;!#1]	-0.7096	2.173
N3	[NH2+0]a	-1.027	2.827
N4	[NH1+0]([!#1;A,a])a	-0.5188	3
N5	[NH+0]=[!#1;A,a]	0.08387	1.757
N6	[N+0](=[!#1;A,a])[!#1;A,a]	0.1836	2.428
N7	[N+0]([A;!#1])([A;!#1])[A;!#1]	-0.3187	1.839
N8	[N+0](a)([!#1;A,a])[A;!#1]	-0.4458	2.819
N8	[N+0](a)(a)a	-0.4458	2.819
N9	[N+0]#[A;!#1]	0.01508	1.725
N10	[NH3,NH2,NH;+,+2,+3]	-1.95	0
N11	[n+0]	-0.3239	2.202
N12	[n;+,+2,+3]	-1.119	0
N13	[NH0;+,+2,+3]([A;!#1])([A;!#1])([A;!#1])[A;!#1]	-0.3396	0.2604
N13	[NH0;+,+2,+3](=[A;!#1])([A;!#1])[!#1;A,a]	-0.3396	0.2604
N13	[NH0;+,+2,+3](=[#6])=[#7]	-0.3396	0.2604
N14	[N;+,+2,+3]#[A;!#1]	0.2887	3.359
N14	[N;-,-2,-3]	0.2887	3.359
N14	[N;+,+2,+3](=[N;-,-2,-3])=N	0.2887	3.359
NS	[#7]	-0.4806	2.134
O1	[o]	0.1552	1.08
O2	[OH,OH2]	-0.2893	0.8238
O3	[O]([A;!#1])[A;!#1]	-0.0684	1.085
O4	[O](a)[!#1;A,a]	-0.4195	1.182
O5	[O]=[#7,#8]	0.0335	3.367
O5	[OX1;-,-2,-3][#7]	0.0335	3.367
O6	[OX1;-,-2,-2][#16]	-0.3339	0.7774
O6	[O;-0]=[#16;-0]	-0.3339	0.7774
O12	[O-]C(=O)	-1.326	0
O7	[OX1;-,-2,-3][!#1;!N;!S]	-1.189	0
O8	[O]=c	0.1788	3.135
O9	[O]=[CH]C	-0.1526	0
O9	[O]=C(C)([A;!#1])	-0.1526	0
O9	[O]=[CH][N,O]	-0.1526	0
O9	[O]=[CH2]	-0.1526	0
O9	[O]=[CX2]=O	-0.1526	0
O10	[O]=[CH]c	0.1129	0.2215
O10	[O]=C([C,c])[a;!#1]	0.1129	0.2215
O10	[O]=C(c)[A;!#1]	0.1129	0.2215
O11	[O]=C([!#1;!#6])[!#1;!#6]	0.4833	0.389
OS	[#8]	-0.1188	0.6865
F	[#9-0]	0.4202	1.108
Cl	[#17-0]	0.6895	5.853
Br	[#35-0]	0.8456	8.927
I	[#53-0]	0.8857	14.02
Hal	[#9,#17,#35,#53;-]	-2.996	0
Hal	[#53;+,+2,+3]	-2.996	0
Hal	[+;#3,#11,#19,#37,#55]	-2.996	0
P	[#15]	0.8612	6.92
S2	[S;-,-2,-3,-4,+1,+2,+3,+5,+6]	-0.0024	7.365
S2	[S-0]=[N,O,P,S]	-0.0024	7.365
S1	[S;A]	0.6482	7.591
S3	[s;a]	0.6237	6.691
Me1	[#3,#11,#19,#37,#55]	-0.3808	5.754
Me1	[#4,#12,#20,#38,#56]	-0.3808	5.754
Me1	[#5,#13,#31,#49,#81]	-0.3808	5.754
Me1	[#14,#32,#50,#82]	-0.3808	5.754
Me1	[#33,#51,#83]	-0.3808	5.754
Me1	[#34,#52,#84]	-0.3808	5.754
Me2	[#21,#22,#23,#24,#25,#26,#27,#28,#29,#30]	-0.0025	0
Me2	[#39,#40,#41,#42,#43,#44,#45,#46,#47,#48]	-0.0025	0
Me2	[#72,#73,#74,#75,#76,#77,#78,#79,#80]	-0.0025	0
`

type crippenParam struct {
	typ      string
	pat      *spattern
	logp, mr float64
}

// crippenByZ lists, per atomic number, the parameter indices whose first
// pattern atom can match that element (in parameter order).
var crippenByZ = func() (out [120][]int16) {
	for k, p := range crippenParams {
		set := possibleZ(p.pat.atoms[0])
		for z := range out {
			if set == nil || set[z] {
				out[z] = append(out[z], int16(k))
			}
		}
	}
	return out
}()

// crippenCand is a parameter that can type an atom: its pattern's first
// atom matches (rootMatched), or depends on the neighbours (recursive SMARTS).
type crippenCand struct {
	k           int16
	rootMatched bool
}

// crippenCache maps gatom keys to their candidate parameters (in order):
// a direct-mapped table of immutable entries, read without locks (a miss
// computes the candidates and replaces the slot). Molecules share few
// distinct atom kinds, so nearly every lookup hits.
var crippenCache [1 << 10]cacheSlot[crippenEntry]

type crippenEntry struct {
	key   uint64
	cands []crippenCand
	// star: every candidate's pattern is the root and atoms bonded to it
	// (no recursion), so the type depends only on the atom's features and
	// the multiset of its bonds and neighbours' features (see envEntry)
	star bool
}

// crippenStar[k] is true when parameter k's pattern has every atom bonded
// to the root and no recursive SMARTS.
var crippenStar = func() []bool {
	out := make([]bool, len(crippenParams))
	for k, cp := range crippenParams {
		p := cp.pat
		out[k] = true
		for a := 1; a < len(p.atoms); a++ {
			if p.parent[a] != 0 {
				out[k] = false
			}
		}
		for _, prog := range p.prog {
			if hasRecursion(prog) {
				out[k] = false
			}
		}
	}
	return out
}()

// crippenSlot returns key's slot of crippenCache.
func crippenSlot(key uint64) *cacheSlot[crippenEntry] {
	return &crippenCache[(key*0x9e3779b97f4a7c15)>>54]
}

// crippenCandidates returns the parameters, in order, whose first pattern
// atom can match an atom with features a (key: a.key()). The entry is shared
// and immutable.
func crippenCandidates(a *gatom, key uint64) *crippenEntry {
	slot := crippenSlot(key)
	if e := slot.load(); e != nil && e.key == key {
		return e
	}
	var c []crippenCand
	one := matchGraph{n: 1, at: []gatom{*a}, start: []int32{0, 0}}
	for _, k := range crippenByZ[uint8(a[fZ])] {
		p := crippenParams[k].pat
		if hasRecursion(p.prog[0]) {
			c = append(c, crippenCand{k: k})
		} else if one.atomMatches(p, 0, 0) {
			c = append(c, crippenCand{k: k, rootMatched: true})
		}
	}
	e := &crippenEntry{key: key, cands: c, star: true}
	for _, cc := range c {
		if !crippenStar[cc.k] {
			e.star = false
		}
	}
	slot.store(e)
	return e
}

// crippenTypeCache maps the exact star environment of an atom (its
// features, then the bond and features of each neighbour, sorted; see
// envEntry) to the index of its Crippen parameter, for atoms whose candidate
// patterns are all stars and that have at most typeEnvNbrs neighbours:
// direct-mapped, replaced on a miss. Its entries are words in the table, not
// pointers to entries: the garbage collector would otherwise mark thousands
// of them at every cycle (see README.md, "Performance").
var crippenTypeCache [1 << 14]wordSlot

const (
	// slotWords is the size of a wordSlot's entry: a crippenTypeCache entry.
	slotWords = 2 + typeEnvNbrs
	// typeEnvNbrs is the most neighbours of an environment in crippenTypeCache.
	typeEnvNbrs = 4
	// typeKShift is where an entry's first word keeps the parameter index.
	typeKShift = 40
)

// crippenTypeCacheOff disables crippenTypeCache (tests compare both ways).
var crippenTypeCacheOff bool

// envEntry returns the crippenTypeCache entry, without its parameter, and the
// hash of the star environment of graph atom i, which has at most typeEnvNbrs
// neighbours: word 0 holds a valid bit (63), the parameter index + 1 (16 bits
// at typeKShift, left 0 here), the neighbours' bond indices (8 bits each from
// bit 8) and their number (bits 0-7); word 1 the atom's feature key; then
// one word per neighbour, its feature key (0 past the last). The neighbours
// are sorted by bond index, then key, in registers: up to four, each a bond
// index and a key.
func (g *matchGraph) envEntry(i int) (e [slotWords]uint64, h uint64) {
	const none = math.MaxUint64 // sorts after every real neighbour
	b0, b1, b2, b3 := uint64(none), uint64(none), uint64(none), uint64(none)
	k0, k1, k2, k3 := uint64(none), uint64(none), uint64(none), uint64(none)
	lo, hi := int(g.start[i]), int(g.start[i+1])
	for x, nb := range g.nb[lo:hi] {
		b, k := uint64(nb.bindex), g.keys[nb.j]
		switch x {
		case 0:
			b0, k0 = b, k
		case 1:
			b1, k1 = b, k
		case 2:
			b2, k2 = b, k
		default:
			b3, k3 = b, k
		}
	}
	// a sorting network of five compare-exchanges
	cx := func(ba, ka, bb, kb uint64) (uint64, uint64, uint64, uint64) {
		if bb < ba || bb == ba && kb < ka {
			return bb, kb, ba, ka
		}
		return ba, ka, bb, kb
	}
	b0, k0, b1, k1 = cx(b0, k0, b1, k1)
	b2, k2, b3, k3 = cx(b2, k2, b3, k3)
	b0, k0, b2, k2 = cx(b0, k0, b2, k2)
	b1, k1, b3, k3 = cx(b1, k1, b3, k3)
	b1, k1, b2, k2 = cx(b1, k1, b2, k2)
	n := hi - lo
	rk := g.keys[i]
	e[0], e[1] = 1<<63|uint64(n), rk
	h = rk * 0x9e3779b97f4a7c15
	mix := func(x int, b, k uint64) {
		if x < n {
			e[0] |= b << (8 + 8*x)
			e[2+x] = k
			h = (h^(k+b<<56))*0x9e3779b97f4a7c15 + b
		}
	}
	mix(0, b0, k0)
	mix(1, b1, k1)
	mix(2, b2, k2)
	mix(3, b3, k3)
	return e, h ^ h>>29
}

func hasRecursion(prog []ains) bool {
	for _, in := range prog {
		if in.field == fRec {
			return true
		}
	}
	return false
}

// possibleZ returns the atomic numbers an atom expression can match, or
// nil if it does not restrict the element.
func possibleZ(e *aexpr) []bool {
	switch e.op {
	case 'p':
		switch e.kind {
		case pElemAli, pElemArom, pAtomicNum:
			s := make([]bool, 120)
			if e.val >= 0 && e.val < 120 {
				s[e.val] = true
			}
			return s
		}
		return nil
	case '&':
		var acc []bool
		for _, k := range e.kids {
			s := possibleZ(k)
			if s == nil {
				continue
			}
			if acc == nil {
				acc = s
				continue
			}
			for z := range acc {
				acc[z] = acc[z] && s[z]
			}
		}
		return acc
	case ',':
		acc := make([]bool, 120)
		for _, k := range e.kids {
			s := possibleZ(k)
			if s == nil {
				return nil
			}
			for z := range acc {
				acc[z] = acc[z] || s[z]
			}
		}
		return acc
	}
	return nil
}

var crippenParams = func() []crippenParam {
	var out []crippenParam
	for _, line := range strings.Split(strings.TrimSpace(crippenData), "\n") {
		f := strings.Split(line, "\t")
		lp, _ := strconv.ParseFloat(f[2], 64)
		mr, _ := strconv.ParseFloat(f[3], 64)
		out = append(out, crippenParam{typ: f[0], pat: mustSMARTS(f[1]), logp: lp, mr: mr})
	}
	return out
}()

// crippenWith sums the Crippen contributions and, if types is non-nil,
// records each atom's type ("" if no type matches).
func (m *Mol) crippenWith(types *[]string) (logp, mr float64) {
	g := newMatchGraph(m, true)
	defer g.release()
	na := len(m.atoms)
	lastParent, lastK := int32(-1), -1
	// The molecule's few atom kinds are looked up once each; the list and
	// its keys are on the stack (kinds beyond it are looked up every time).
	var kinds [24]*crippenEntry
	var kindKeys [24]uint64
	nk := 0
	for i := 0; i < g.n; i++ {
		typ := ""
		if i >= na && g.nb[g.start[i]].j == lastParent {
			// implicit hydrogens on the same atom are equivalent
			if lastK >= 0 {
				p := &crippenParams[lastK]
				logp += p.logp
				mr += p.mr
				typ = p.typ
			}
			if types != nil {
				*types = append(*types, typ)
			}
			continue
		}
		key := g.keys[i]
		var ce *crippenEntry
		for k, kk := range kindKeys[:nk] {
			if kk == key {
				ce = kinds[k]
				break
			}
		}
		if ce == nil {
			if e := crippenSlot(key).load(); e != nil && e.key == key {
				ce = e // crippenCandidates' cache, read here: a call is costly in wasm
			} else {
				ce = crippenCandidates(&g.at[i], key)
			}
			if nk < len(kinds) {
				kinds[nk], kindKeys[nk] = ce, key
				nk++
			}
		}
		// The type: through crippenTypeCache when ce's patterns are stars
		// and the atom has at most typeEnvNbrs neighbours.
		found, cached := -1, false
		var slot *wordSlot
		var env [slotWords]uint64
		if ce.star && !crippenTypeCacheOff && g.start[i+1]-g.start[i] <= typeEnvNbrs {
			var h uint64
			env, h = g.envEntry(i)
			slot = &crippenTypeCache[h>>50]
			if w0, ok := slot.lookup(&env, 0xffff<<typeKShift); ok {
				found, cached = int(w0>>typeKShift&0xffff)-1, true
			}
		}
		if !cached {
			// the first parameter whose pattern matches at atom i
			for _, c := range ce.cands {
				p := &crippenParams[c.k]
				if (c.rootMatched && g.extendFrom(p.pat, i)) || (!c.rootMatched && g.matchAt(p.pat, i)) {
					found = int(c.k)
					break
				}
			}
			if slot != nil {
				env[0] |= uint64(uint16(found+1)) << typeKShift
				slot.store(&env)
			}
		}
		if found >= 0 {
			p := &crippenParams[found]
			logp += p.logp
			mr += p.mr
			typ = p.typ
		}
		if i >= na {
			lastParent, lastK = g.nb[g.start[i]].j, found
		}
		if types != nil {
			*types = append(*types, typ)
		}
	}
	return logp, mr
}

// CrippenTypes returns the Wildman–Crippen atom type ("C18", "N11", "H1",
// ...) of every graph atom in atom order, followed by one entry per implicit
// or bracket hydrogen (the hydrogens of atom 0 first, then of atom 1, ...).
func (m *Mol) CrippenTypes() []string {
	var t []string
	m.crippenWith(&t)
	return t
}

// CrippenLogP returns the Wildman–Crippen logP (RDKit MolLogP).
func (m *Mol) CrippenLogP() float64 { l, _ := m.crippenWith(nil); return l }

// CrippenMR returns the Wildman–Crippen molar refractivity (RDKit MolMR).
func (m *Mol) CrippenMR() float64 { _, r := m.crippenWith(nil); return r }
