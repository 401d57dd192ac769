package ml

import (
	"math"
	"math/rand"
	"sort"
)

// GBT is a gradient-boosted ensemble of binary decision trees for the
// log-loss. Trees are stored flat: a node with Left < 0 is a leaf.
type GBT struct {
	Base  float32
	Roots []int32
	Nodes []Node
}

// Node is one node of a GBT tree: x[Feature] ≤ Thr goes to Left, else Right;
// leaves (Left < 0) hold Value, a log-odds increment.
type Node struct {
	Feature     int32
	Thr         float32
	Left, Right int32
	Value       float32
}

func (g *GBT) margin(lookup func(f int32) float32) float64 {
	z := float64(g.Base)
	for _, r := range g.Roots {
		n := &g.Nodes[r]
		for n.Left >= 0 {
			if lookup(n.Feature) <= n.Thr {
				n = &g.Nodes[n.Left]
			} else {
				n = &g.Nodes[n.Right]
			}
		}
		z += float64(n.Value)
	}
	return z
}

func (g *GBT) predict(dense []float32) float64 {
	return sigmoid(g.margin(func(f int32) float32 { return dense[f] }))
}

// valueOf returns feature f of sparse x (0 when absent).
func valueOf(x Sparse, f int32) float32 {
	k := sort.Search(len(x.Idx), func(k int) bool { return x.Idx[k] >= f })
	if k < len(x.Idx) && x.Idx[k] == f {
		return x.Val[k]
	}
	return 0
}

const maxBins = 32

// binned is the training matrix with feature values replaced by bin numbers.
type binned struct {
	edges  [][]float32 // per feature: ascending upper bin edges (v ≤ edges[b] is bin ≤ b)
	zero   []uint8     // bin of the value 0 per feature
	rowPtr []int32
	feat   []int32
	bin    []uint8
}

func binData(X []Sparse, nf int) *binned {
	vals := make([][]float32, nf)
	present := make([]int, nf)
	for _, x := range X {
		for k, i := range x.Idx {
			vals[i] = append(vals[i], x.Val[k])
			present[i]++
		}
	}
	b := &binned{edges: make([][]float32, nf), zero: make([]uint8, nf)}
	for f := 0; f < nf; f++ {
		v := vals[f]
		if present[f] < len(X) {
			v = append(v, 0)
		}
		sort.Slice(v, func(a, c int) bool { return v[a] < v[c] })
		var uniq []float32
		for i, x := range v {
			if i == 0 || x != v[i-1] {
				uniq = append(uniq, x)
			}
		}
		if len(uniq) <= maxBins {
			b.edges[f] = uniq
		} else {
			// Quantile edges over the sorted values.
			var e []float32
			for q := 1; q <= maxBins; q++ {
				x := v[min(len(v)-1, q*len(v)/maxBins)]
				if q == maxBins {
					x = v[len(v)-1]
				}
				if len(e) == 0 || x > e[len(e)-1] {
					e = append(e, x)
				}
			}
			b.edges[f] = e
		}
		b.zero[f] = b.binOf(f, 0)
		vals[f] = nil
	}
	b.rowPtr = make([]int32, len(X)+1)
	for r, x := range X {
		for k, i := range x.Idx {
			b.feat = append(b.feat, i)
			b.bin = append(b.bin, b.binOf(int(i), x.Val[k]))
		}
		b.rowPtr[r+1] = int32(len(b.feat))
	}
	return b
}

func (b *binned) binOf(f int, v float32) uint8 {
	e := b.edges[f]
	i := sort.Search(len(e), func(i int) bool { return e[i] >= v })
	if i >= len(e) {
		i = len(e) - 1
	}
	if i < 0 {
		i = 0
	}
	return uint8(i)
}

type split struct {
	gain    float64
	feature int32
	bin     uint8
}

// fitGBT grows spec.Trees depth-limited trees on the weighted log-loss with
// histogram splits, row and column subsampling.
func fitGBT(spec Spec, X []Sparse, y, w []float32, nf int) *GBT {
	lambda, rate, depth := spec.l2(1), spec.rate(0.1), spec.depth()
	const minHess = 1.0
	bd := binData(X, nf)
	r := rand.New(rand.NewSource(spec.Seed + 1))
	n := len(X)
	var sw, sp float64
	for i := range y {
		sw += float64(w[i])
		sp += float64(w[i] * y[i])
	}
	p0 := math.Min(math.Max(sp/sw, 1e-6), 1-1e-6)
	g := &GBT{Base: float32(math.Log(p0 / (1 - p0)))}
	F := make([]float64, n)
	for i := range F {
		F[i] = float64(g.Base)
	}
	grad, hess := make([]float64, n), make([]float64, n)
	hist := make([]float64, nf*maxBins*2)
	allowed := make([]bool, nf)
	type job struct {
		node  int32
		rows  []int32
		depth int
	}
	for t := 0; t < spec.trees(); t++ {
		for i := range F {
			p := sigmoid(F[i])
			grad[i] = (p - float64(y[i])) * float64(w[i])
			hess[i] = math.Max(p*(1-p), 1e-6) * float64(w[i])
		}
		var rows []int32
		for i := 0; i < n; i++ {
			if r.Float64() < spec.sub() {
				rows = append(rows, int32(i))
			}
		}
		for f := range allowed {
			allowed[f] = r.Float64() < spec.col()
		}
		root := int32(len(g.Nodes))
		g.Nodes = append(g.Nodes, Node{Left: -1, Right: -1})
		g.Roots = append(g.Roots, root)
		queue := []job{{root, rows, 0}}
		for len(queue) > 0 {
			j := queue[0]
			queue = queue[1:]
			var G, H float64
			for _, i := range j.rows {
				G += grad[i]
				H += hess[i]
			}
			leaf := func() { g.Nodes[j.node].Value = float32(-G / (H + lambda) * rate) }
			if j.depth >= depth || H < 2*minHess {
				leaf()
				continue
			}
			best := bd.bestSplit(j.rows, grad, hess, G, H, lambda, minHess, allowed, hist)
			if best.gain <= 1e-9 {
				leaf()
				continue
			}
			var left, right []int32
			for _, i := range j.rows {
				if bd.rowBin(i, best.feature) <= best.bin {
					left = append(left, i)
				} else {
					right = append(right, i)
				}
			}
			l := int32(len(g.Nodes))
			g.Nodes = append(g.Nodes, Node{Left: -1, Right: -1}, Node{Left: -1, Right: -1})
			g.Nodes[j.node] = Node{Feature: best.feature, Thr: bd.edges[best.feature][best.bin], Left: l, Right: l + 1}
			queue = append(queue, job{l, left, j.depth + 1}, job{l + 1, right, j.depth + 1})
		}
		one := &GBT{Roots: []int32{root}, Nodes: g.Nodes}
		for i := range F {
			F[i] += one.margin(func(f int32) float32 { return valueOf(X[i], f) })
		}
	}
	return g
}

func (b *binned) rowBin(i int32, f int32) uint8 {
	fs := b.feat[b.rowPtr[i]:b.rowPtr[i+1]]
	k := sort.Search(len(fs), func(k int) bool { return fs[k] >= f })
	if k < len(fs) && fs[k] == f {
		return b.bin[int(b.rowPtr[i])+k]
	}
	return b.zero[f]
}

func (b *binned) bestSplit(rows []int32, grad, hess []float64, G, H, lambda, minHess float64, allowed []bool, hist []float64) split {
	clear(hist)
	for _, i := range rows {
		gi, hi := grad[i], hess[i]
		for k := b.rowPtr[i]; k < b.rowPtr[i+1]; k++ {
			f := b.feat[k]
			if !allowed[f] {
				continue
			}
			o := (int(f)*maxBins + int(b.bin[k])) * 2
			hist[o] += gi
			hist[o+1] += hi
		}
	}
	parent := G * G / (H + lambda)
	best := split{}
	for f := range allowed {
		if !allowed[f] || len(b.edges[f]) < 2 {
			continue
		}
		h := hist[f*maxBins*2 : (f+1)*maxBins*2]
		var gp, hp float64
		for k := 0; k < len(b.edges[f]); k++ {
			gp += h[2*k]
			hp += h[2*k+1]
		}
		z := int(b.zero[f])
		h[2*z] += G - gp
		h[2*z+1] += H - hp
		var gl, hl float64
		for k := 0; k < len(b.edges[f])-1; k++ {
			gl += h[2*k]
			hl += h[2*k+1]
			gr, hr := G-gl, H-hl
			if hl < minHess || hr < minHess {
				continue
			}
			gain := gl*gl/(hl+lambda) + gr*gr/(hr+lambda) - parent
			if gain > best.gain {
				best = split{gain: gain, feature: int32(f), bin: uint8(k)}
			}
		}
	}
	return best
}
