package ml

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Learner kinds.
const (
	KindLogReg = "logreg"
	KindGBT    = "gbt"
	KindMLP    = "mlp"
	KindKNN    = "knn"
	// KindRF is a random forest (Forest): Trees bagged trees (default 500),
	// Depth-limited or grown until pure (Depth 0), MinLeaf, ColSample of
	// the features tried per split (default √features), Balanced.
	KindRF = "rf"
	// KindEnsemble averages the calibrated probabilities of Spec.Members
	// (Ensemble).
	KindEnsemble = "ensemble"
)

// Spec configures a learner: its kind and hyper-parameters. Zero values take
// the defaults documented per field.
type Spec struct {
	// Kind is KindLogReg, KindGBT, KindMLP, KindKNN (k = Trees, default 7),
	// KindRF or KindEnsemble.
	Kind string
	// L2 is the weight penalty (logreg: λ/2·|w|² per sample, default 1e-3;
	// GBT: leaf-value λ, default 1; MLP: decoupled weight decay, default 1e-4).
	L2 float64
	// Epochs of training (logreg: full-batch Adam steps, default 300; MLP:
	// passes over the data, default 30).
	Epochs int
	// Rate is the learning rate (logreg 0.05, GBT shrinkage 0.1, MLP 1e-3).
	Rate float64
	// Trees and Depth size the gradient-boosted ensemble (default 300, 6).
	Trees, Depth int
	// Subsample is the fraction of rows per tree, ColSample the fraction of
	// features per tree (defaults 0.8 and 0.5; a random forest draws
	// bootstrap rows and tries ColSample of the features per split).
	Subsample, ColSample float64
	// Hidden are the MLP hidden layer widths (default 256, 64); Dropout the
	// dropout rate on hidden units (default 0.2); Batch the minibatch size (64).
	Hidden  []int
	Dropout float64
	Batch   int
	// MinLeaf is the fewest bootstrap draws a random forest's leaf holds
	// (default 1).
	MinLeaf int
	// Balanced weights the classes inversely to their frequency.
	Balanced bool
	// ScaleFrom is the first feature index standardised for logistic
	// regression and MLPs, and the end of the Morgan bits kNN compares
	// (default: where the descriptors at the end of the vector start).
	ScaleFrom int
	// Seed makes the training deterministic.
	Seed int64
	// Members are the single-output learners (logistic regression, GBT,
	// kNN, random forest) of a KindEnsemble, at most 8.
	Members []Spec
}

func (s Spec) scaleFrom(nf int) int { return orI(s.ScaleFrom, nf-len(DescriptorNames)) }

// String describes the spec in one line, for reports.
func (s Spec) String() string {
	switch s.Kind {
	case KindLogReg:
		return fmt.Sprintf("logistic regression (L2 %g, balanced %v)", s.l2(1e-3), s.Balanced)
	case KindGBT:
		return fmt.Sprintf("gradient-boosted trees (%d trees, depth %d, rate %g, λ %g, subsample %g, colsample %g, balanced %v)",
			s.trees(), s.depth(), s.rate(0.1), s.l2(1), s.sub(), s.col(), s.Balanced)
	case KindRF:
		return s.forestString()
	case KindKNN:
		return fmt.Sprintf("k-nearest neighbours (k %d, Tanimoto on Morgan bits)", orI(s.Trees, 7))
	case KindEnsemble:
		return s.ensembleString()
	case KindMLP:
		return fmt.Sprintf("MLP (hidden %v, dropout %g, %d epochs, AdamW rate %g, weight decay %g, balanced %v)",
			s.hidden(), s.dropout(), s.epochs(30), s.rate(1e-3), s.l2(1e-4), s.Balanced)
	}
	return s.Kind
}

func (s Spec) l2(d float64) float64 { return orF(s.L2, d) }
func (s Spec) rate(d float64) float64 {
	return orF(s.Rate, d)
}
func (s Spec) epochs(d int) int { return orI(s.Epochs, d) }
func (s Spec) trees() int       { return orI(s.Trees, 300) }
func (s Spec) depth() int       { return orI(s.Depth, 6) }
func (s Spec) sub() float64     { return orF(s.Subsample, 0.8) }
func (s Spec) col() float64     { return orF(s.ColSample, 0.5) }
func (s Spec) dropout() float64 { return orF(s.Dropout, 0.2) }
func (s Spec) batch() int       { return orI(s.Batch, 64) }
func (s Spec) hidden() []int {
	if len(s.Hidden) == 0 {
		return []int{256, 64}
	}
	return s.Hidden
}

func orF(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func orI(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// Model is a trained classifier with one or more probability outputs.
// A random forest (KindRF) keeps its trees in GBT, in the same flat node
// format (Base unused, a leaf's Value is its fraction of positives), so
// that the bundle's encoded types are those of every other learner.
type Model struct {
	Kind        string
	NumFeatures int
	Outputs     int
	Scaler      *Scaler
	LR          *LogReg
	GBT         *GBT
	MLP         *MLP
	KNN         *KNN
	Ensemble    *Ensemble

	forestOnce sync.Once
	forest     *Forest // KindRF: GBT's trees laid out for prediction
}

// Fit trains a model of spec's kind on rows X with labels Y (Y[i][t] is 1, 0
// or NaN when row i has no label for output t). Every kind but the MLP takes
// a single output.
func Fit(spec Spec, X []Sparse, Y [][]float32, numFeatures int) (*Model, error) {
	if len(X) != len(Y) || len(X) == 0 {
		return nil, fmt.Errorf("ml: fit: %d rows and %d labels", len(X), len(Y))
	}
	outs := len(Y[0])
	m := &Model{Kind: spec.Kind, NumFeatures: numFeatures, Outputs: outs}
	switch spec.Kind {
	case KindLogReg, KindGBT, KindKNN, KindRF, KindEnsemble:
		if outs != 1 {
			return nil, fmt.Errorf("ml: fit: %s takes one output, got %d", spec.Kind, outs)
		}
		var xs []Sparse
		var ys []float32
		for i := range X {
			if !math.IsNaN(float64(Y[i][0])) {
				xs, ys = append(xs, X[i]), append(ys, Y[i][0])
			}
		}
		w := classWeights(ys, spec.Balanced)
		switch spec.Kind {
		case KindLogReg:
			m.Scaler = FitScaler(xs, spec.scaleFrom(numFeatures), numFeatures)
			m.LR = fitLogReg(spec, m.Scaler.ApplyAll(xs), ys, w, numFeatures)
		case KindGBT:
			m.GBT = fitGBT(spec, xs, ys, w, numFeatures)
		case KindRF:
			f := fitForest(spec, xs, ys, w, numFeatures)
			m.GBT = &GBT{Roots: f.Roots, Nodes: f.Nodes}
		case KindEnsemble:
			e, err := fitEnsemble(spec, xs, ys, numFeatures)
			if err != nil {
				return nil, err
			}
			m.Ensemble = e
		default:
			m.KNN = fitKNN(spec, xs, ys, spec.scaleFrom(numFeatures))
		}
	case KindMLP:
		m.Scaler = FitScaler(X, spec.scaleFrom(numFeatures), numFeatures)
		m.MLP = fitMLP(spec, m.Scaler.ApplyAll(X), Y, numFeatures)
	default:
		return nil, errors.New("ml: fit: unknown learner kind " + spec.Kind)
	}
	return m, nil
}

// Predict returns the probability of each output for feature vector x.
// dense is scratch space of NumFeatures floats (nil allocates).
func (m *Model) Predict(x Sparse, dense []float32) []float64 {
	if m.Scaler != nil {
		x = m.Scaler.Apply(x)
	}
	switch m.Kind {
	case KindLogReg:
		return []float64{m.LR.predict(x)}
	case KindGBT:
		if len(dense) < m.NumFeatures {
			dense = make([]float32, m.NumFeatures)
		}
		x.Dense(dense)
		return []float64{m.GBT.predict(dense)}
	case KindRF:
		if len(dense) < m.NumFeatures {
			dense = make([]float32, m.NumFeatures)
		}
		x.Dense(dense)
		m.forestOnce.Do(func() { m.forest = &Forest{Roots: m.GBT.Roots, Nodes: m.GBT.Nodes} })
		return []float64{m.forest.predict(dense)}
	case KindMLP:
		return m.MLP.predict(x)
	case KindKNN:
		return []float64{m.KNN.predict(x)}
	case KindEnsemble:
		if len(dense) < m.NumFeatures {
			dense = make([]float32, m.NumFeatures)
		}
		return []float64{m.Ensemble.predict(x, dense)}
	}
	return nil
}

func classWeights(y []float32, balanced bool) []float32 {
	w := make([]float32, len(y))
	var pos float64
	for _, v := range y {
		pos += float64(v)
	}
	wp, wn := float32(1), float32(1)
	if balanced && pos > 0 && pos < float64(len(y)) {
		n := float64(len(y))
		wp, wn = float32(n/(2*pos)), float32(n/(2*(n-pos)))
	}
	for i, v := range y {
		if v > 0.5 {
			w[i] = wp
		} else {
			w[i] = wn
		}
	}
	return w
}

// Scaler standardises the features in [From, To) (the descriptors) to zero
// mean and unit variance, clipped to ±6.
type Scaler struct {
	From, To  int
	Mean, Inv []float32
}

// FitScaler estimates the standardisation of features [from, to) on X.
func FitScaler(X []Sparse, from, to int) *Scaler {
	n := to - from
	sum, sq := make([]float64, n), make([]float64, n)
	for _, x := range X {
		for k, i := range x.Idx {
			if int(i) >= from && int(i) < to {
				v := float64(x.Val[k])
				sum[i-int32(from)] += v
				sq[i-int32(from)] += v * v
			}
		}
	}
	s := &Scaler{From: from, To: to, Mean: make([]float32, n), Inv: make([]float32, n)}
	cnt := float64(max(len(X), 1))
	for j := 0; j < n; j++ {
		mu := sum[j] / cnt
		sd := math.Sqrt(math.Max(sq[j]/cnt-mu*mu, 0))
		s.Mean[j] = float32(mu)
		if sd > 1e-9 {
			s.Inv[j] = float32(1 / sd)
		}
	}
	return s
}

// Apply returns x with the descriptor features standardised (a new vector).
func (s *Scaler) Apply(x Sparse) Sparse {
	out := Sparse{Idx: x.Idx, Val: make([]float32, len(x.Val))}
	for k, i := range x.Idx {
		v := x.Val[k]
		if int(i) >= s.From && int(i) < s.To {
			j := int(i) - s.From
			v = (v - s.Mean[j]) * s.Inv[j]
			v = max(-6, min(6, v))
		}
		out.Val[k] = v
	}
	return out
}

// ApplyAll applies the scaler to every row.
func (s *Scaler) ApplyAll(X []Sparse) []Sparse {
	out := make([]Sparse, len(X))
	for i, x := range X {
		out[i] = s.Apply(x)
	}
	return out
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}
