package ml

import (
	"math"
	"math/rand"
)

// MLP is a multilayer perceptron with ReLU hidden layers and one sigmoid
// output per task. Layer 0 reads the sparse input.
type MLP struct {
	Layers []Layer
}

// Layer is a dense layer: out = b + Σ in[i]·W[i*Out+o].
type Layer struct {
	In, Out int
	W, B    []float32
}

func (m *MLP) predict(x Sparse) []float64 {
	acts := m.forward(x, nil, 0, nil)
	z := acts[len(acts)-1]
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = sigmoid(float64(v))
	}
	return out
}

// forward returns the activations of every layer (post-ReLU for hidden, logits
// for the last). With a non-nil r, hidden units drop out with rate p; masks
// receives the kept-unit scale factors per hidden layer.
func (m *MLP) forward(x Sparse, r *rand.Rand, p float64, masks [][]float32) [][]float32 {
	acts := make([][]float32, len(m.Layers))
	for li := range m.Layers {
		L := &m.Layers[li]
		h := make([]float32, L.Out)
		copy(h, L.B)
		if li == 0 {
			for k, i := range x.Idx {
				v := x.Val[k]
				row := L.W[int(i)*L.Out : int(i+1)*L.Out]
				for o := range h {
					h[o] += v * row[o]
				}
			}
		} else {
			prev := acts[li-1]
			for i, v := range prev {
				if v == 0 {
					continue
				}
				row := L.W[i*L.Out : (i+1)*L.Out]
				for o := range h {
					h[o] += v * row[o]
				}
			}
		}
		if li < len(m.Layers)-1 {
			for o, v := range h {
				if v < 0 {
					h[o] = 0
				}
			}
			if r != nil && p > 0 {
				mk := masks[li]
				for o := range h {
					if r.Float64() < p {
						mk[o] = 0
					} else {
						mk[o] = float32(1 / (1 - p))
					}
					h[o] *= mk[o]
				}
			}
		}
		acts[li] = h
	}
	return acts
}

// fitMLP trains with minibatch AdamW on the masked, optionally class-balanced
// binary cross-entropy of every output.
func fitMLP(spec Spec, X []Sparse, Y [][]float32, nf int) *MLP {
	r := rand.New(rand.NewSource(spec.Seed + 7))
	T := len(Y[0])
	sizes := append([]int{nf}, spec.hidden()...)
	sizes = append(sizes, T)
	m := &MLP{}
	for i := 0; i+1 < len(sizes); i++ {
		in, out := sizes[i], sizes[i+1]
		L := Layer{In: in, Out: out, W: make([]float32, in*out), B: make([]float32, out)}
		scale := math.Sqrt(2 / float64(min(in, 256)))
		if i == 0 {
			scale = math.Sqrt(2.0 / 100) // about 100 active inputs per molecule
		}
		for k := range L.W {
			L.W[k] = float32(r.NormFloat64() * scale * 0.5)
		}
		m.Layers = append(m.Layers, L)
	}
	// Per-task positive and negative weights.
	wPos, wNeg := make([]float64, T), make([]float64, T)
	for t := 0; t < T; t++ {
		var pos, n float64
		for i := range Y {
			if v := Y[i][t]; !math.IsNaN(float64(v)) {
				n++
				pos += float64(v)
			}
		}
		wPos[t], wNeg[t] = 1, 1
		if spec.Balanced && pos > 0 && pos < n {
			wPos[t], wNeg[t] = n/(2*pos), n/(2*(n-pos))
		}
	}
	type adam struct{ m, v []float32 }
	grads := make([]Layer, len(m.Layers))
	opt := make([][2]adam, len(m.Layers))
	for i, L := range m.Layers {
		grads[i] = Layer{W: make([]float32, len(L.W)), B: make([]float32, len(L.B))}
		opt[i] = [2]adam{{make([]float32, len(L.W)), make([]float32, len(L.W))}, {make([]float32, len(L.B)), make([]float32, len(L.B))}}
	}
	masks := make([][]float32, len(m.Layers))
	for i, L := range m.Layers {
		masks[i] = make([]float32, L.Out)
	}
	rate, decay, p := spec.rate(1e-3), spec.l2(1e-4), spec.dropout()
	const b1, b2, eps = 0.9, 0.999, 1e-8
	order := make([]int, len(X))
	for i := range order {
		order[i] = i
	}
	step := 0
	deltas := make([][]float32, len(m.Layers))
	for e := 0; e < spec.epochs(30); e++ {
		r.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for s := 0; s < len(order); s += spec.batch() {
			batch := order[s:min(s+spec.batch(), len(order))]
			for i := range grads {
				clear(grads[i].W)
				clear(grads[i].B)
			}
			for _, idx := range batch {
				x := X[idx]
				acts := m.forward(x, r, p, masks)
				last := len(m.Layers) - 1
				d := make([]float32, T)
				any := false
				for t := 0; t < T; t++ {
					yv := Y[idx][t]
					if math.IsNaN(float64(yv)) {
						continue
					}
					any = true
					w := wNeg[t]
					if yv > 0.5 {
						w = wPos[t]
					}
					d[t] = float32((sigmoid(float64(acts[last][t])) - float64(yv)) * w / float64(len(batch)))
				}
				if !any {
					continue
				}
				deltas[last] = d
				for li := last; li >= 0; li-- {
					L := &m.Layers[li]
					gl := &grads[li]
					dl := deltas[li]
					for o, v := range dl {
						gl.B[o] += v
					}
					if li == 0 {
						for k, i := range x.Idx {
							v := x.Val[k]
							row := gl.W[int(i)*L.Out : int(i+1)*L.Out]
							for o, dv := range dl {
								row[o] += v * dv
							}
						}
						break
					}
					prev := acts[li-1]
					dprev := make([]float32, L.In)
					for i, v := range prev {
						if v == 0 {
							continue
						}
						row := L.W[i*L.Out : (i+1)*L.Out]
						grow := gl.W[i*L.Out : (i+1)*L.Out]
						var sum float32
						for o, dv := range dl {
							grow[o] += v * dv
							sum += row[o] * dv
						}
						dprev[i] = sum * masks[li-1][i] // ReLU' is 1 where v > 0
						if p == 0 {
							dprev[i] = sum
						}
					}
					deltas[li-1] = dprev
				}
			}
			step++
			c1 := float32(1 - math.Pow(b1, float64(step)))
			c2 := float32(1 - math.Pow(b2, float64(step)))
			for li := range m.Layers {
				L := &m.Layers[li]
				adamStep(L.W, grads[li].W, opt[li][0].m, opt[li][0].v, float32(rate), float32(decay), c1, c2)
				adamStep(L.B, grads[li].B, opt[li][1].m, opt[li][1].v, float32(rate), 0, c1, c2)
			}
		}
	}
	return m
}

func adamStep(w, g, m, v []float32, rate, decay, c1, c2 float32) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	for i := range w {
		gi := g[i]
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		w[i] -= rate*(m[i]/c1)/(float32(math.Sqrt(float64(v[i]/c2)))+eps) + rate*decay*w[i]
	}
}
