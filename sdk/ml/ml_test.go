package ml

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"testing"

	"toxgate/sdk/chem"
)

func mustMol(t testing.TB, s string) *chem.Mol {
	t.Helper()
	m, err := Standardize(s)
	if err != nil {
		t.Fatalf("Standardize(%q): %v", s, err)
	}
	return m
}

func TestStandardizeKeepsLargestFragment(t *testing.T) {
	m := mustMol(t, "[Na+].CC(=O)Oc1ccccc1C(=O)[O-]")
	if m.SMILES() != "CC(=O)Oc1ccccc1C(=O)[OH]" {
		t.Fatalf("largest fragment = %q", m.SMILES())
	}
	// Hydrochloride salt and free base are the same structure.
	if MolKey(mustMol(t, "CN(C)CCCN1c2ccccc2CCc2ccccc21.Cl")) != MolKey(mustMol(t, "CN(C)CCCN1c2ccccc2CCc2ccccc21")) {
		t.Fatal("salt and free base have different keys")
	}
	if MolKey(mustMol(t, "c1ccccc1O")) == MolKey(mustMol(t, "c1ccccc1N")) {
		t.Fatal("phenol and aniline share a key")
	}
}

func TestStandardizeErrorPositionIsInTheWholeString(t *testing.T) {
	_, err := Standardize("CCO.C1CC(")
	var pe *chem.ParseError
	if !errors.As(err, &pe) || pe.Pos < 4 {
		t.Fatalf("error = %v, want a ParseError past the dot", err)
	}
	if _, err := Standardize("   "); err == nil {
		t.Fatal("blank SMILES accepted")
	}
}

func TestScaffoldKey(t *testing.T) {
	// Toluene and ethylbenzene share the benzene scaffold; pyridine does not.
	a, b, c := ScaffoldKey(mustMol(t, "Cc1ccccc1")), ScaffoldKey(mustMol(t, "CCc1ccccc1")), ScaffoldKey(mustMol(t, "c1ccncc1"))
	if a != b || a == c || a == "" {
		t.Fatalf("keys %q %q %q", a, b, c)
	}
	// Side chains go, the linker between the rings stays, atom order does not matter.
	d := ScaffoldKey(mustMol(t, "OCc1ccc(CCc2ccccc2)cc1"))
	e := ScaffoldKey(mustMol(t, "c1ccccc1CCc1ccccc1"))
	f := ScaffoldKey(mustMol(t, "c1ccccc1Cc1ccccc1"))
	if d != e || d == f {
		t.Fatalf("linker scaffolds %q %q %q", d, e, f)
	}
	if ScaffoldKey(mustMol(t, "CCCCO")) != "" {
		t.Fatal("acyclic molecule has a scaffold")
	}
}

func TestMetricsOnHandComputedCases(t *testing.T) {
	y := []bool{false, false, true, true}
	p := []float64{0.1, 0.4, 0.35, 0.8}
	if got := ROCAUC(y, p); math.Abs(got-0.75) > 1e-12 {
		t.Fatalf("ROC-AUC = %v, want 0.75", got)
	}
	// Ranked: 0.8(+) 0.4(-) 0.35(+) 0.1(-): AP = 0.5·1 + 0.5·2/3.
	if got := PRAUC(y, p); math.Abs(got-(0.5+1.0/3)) > 1e-12 {
		t.Fatalf("PR-AUC = %v", got)
	}
	if got := BalancedAccuracy(y, p, 0.5); got != 0.75 {
		t.Fatalf("BA = %v, want 0.75", got)
	}
	thr := BestThreshold(y, p)
	if ba := BalancedAccuracy(y, p, thr); ba != 0.75 {
		t.Fatalf("best threshold %v gives BA %v", thr, ba)
	}
	if got := ROCAUC([]bool{false, true}, []float64{0.5, 0.5}); got != 0.5 {
		t.Fatalf("tied ROC-AUC = %v", got)
	}
}

func TestFoldsAreBalancedAndKeepScaffoldsTogether(t *testing.T) {
	y := make([]bool, 100)
	keys := make([]string, 100)
	for i := range y {
		y[i] = i%4 == 0
		keys[i] = string(rune('a' + i%13))
	}
	f := RandomFolds(y, 5, 1)
	pos := make([]int, 5)
	for i, k := range f {
		if y[i] {
			pos[k]++
		}
	}
	for _, n := range pos {
		if n != 5 {
			t.Fatalf("positives per fold = %v", pos)
		}
	}
	sf := ScaffoldFolds(keys, 5, 1)
	fold := map[string]int{}
	for i, k := range keys {
		if f, ok := fold[k]; ok && f != sf[i] {
			t.Fatalf("scaffold %q split across folds", k)
		}
		fold[k] = sf[i]
	}
}

func TestADCheckMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var fps [][]uint64
	for i := 0; i < 500; i++ {
		fp := make([]uint64, 16)
		for j := 0; j < 20+r.Intn(60); j++ {
			b := r.Intn(1024)
			fp[b/64] |= 1 << (b % 64)
		}
		fps = append(fps, fp)
	}
	ad := NewADSet(fps, 0.3, 3)
	for q := 0; q < 50; q++ {
		query := fps[r.Intn(len(fps))]
		if q%2 == 1 {
			query = append([]uint64(nil), query...)
			query[q%16] ^= 0xffff
		}
		var sims []float64
		for _, fp := range fps {
			sims = append(sims, diceWords(query, fp))
		}
		top := topK(sims, 3)
		d := ad.Check(query)
		for i := range top {
			if math.Abs(d.Nearest[i]-top[i]) > 1e-4 {
				t.Fatalf("query %d: nearest %v, brute force %v", q, d.Nearest, top)
			}
		}
		if d.InDomain != (top[2] > 0.3) {
			t.Fatalf("query %d: in domain %v with third similarity %v", q, d.InDomain, top[2])
		}
	}
}

func diceWords(a, b []uint64) float64 {
	and, na, nb := 0, popcount(a), popcount(b)
	for i := range a {
		for x := a[i] & b[i]; x != 0; x &= x - 1 {
			and++
		}
	}
	return 2 * float64(and) / float64(na+nb)
}

func topK(s []float64, k int) []float64 {
	c := append([]float64(nil), s...)
	for i := 0; i < k; i++ {
		for j := i + 1; j < len(c); j++ {
			if c[j] > c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c[:k]
}

// synthetic builds rows whose label is decided by two features.
func synthetic(n int, seed int64) ([]Sparse, [][]float32, []bool) {
	r := rand.New(rand.NewSource(seed))
	nf := DefaultFeaturizer.NumFeatures()
	var X []Sparse
	var Y [][]float32
	var yb []bool
	for i := 0; i < n; i++ {
		var x Sparse
		a, b := r.Intn(2) == 1, r.Intn(2) == 1
		if a {
			x.Idx, x.Val = append(x.Idx, 5), append(x.Val, 1)
		}
		if b {
			x.Idx, x.Val = append(x.Idx, 700), append(x.Val, 1)
		}
		x.Idx, x.Val = append(x.Idx, int32(900+r.Intn(50))), append(x.Val, 1) // noise
		for k := 0; k < len(DescriptorNames); k++ {
			x.Idx, x.Val = append(x.Idx, int32(nf-len(DescriptorNames)+k)), append(x.Val, float32(r.NormFloat64()))
		}
		pos := (a && !b) || r.Float64() < 0.05
		X, Y, yb = append(X, x), append(Y, []float32{b2f(pos)}), append(yb, pos)
	}
	return X, Y, yb
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func TestLearnersFitAPattern(t *testing.T) {
	X, Y, _ := synthetic(400, 1)
	Xt, _, yt := synthetic(200, 2)
	nf := DefaultFeaturizer.NumFeatures()
	for _, spec := range []Spec{
		{Kind: KindLogReg, Seed: 1},
		{Kind: KindGBT, Trees: 50, Depth: 3, Seed: 1},
		{Kind: KindMLP, Hidden: []int{16}, Epochs: 40, Rate: 3e-3, Seed: 1},
		{Kind: KindKNN, Trees: 5},
		{Kind: KindRF, Trees: 100, Seed: 1},
		{Kind: KindEnsemble, Seed: 1, Members: []Spec{{Kind: KindKNN, Trees: 5}, {Kind: KindGBT, Trees: 50, Depth: 3}}},
		{Kind: KindEnsemble, Seed: 1, Members: []Spec{{Kind: KindRF, Trees: 50}, {Kind: KindLogReg, Balanced: true}}},
	} {
		m, err := Fit(spec, X, Y, nf)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]float64, len(Xt))
		for i, x := range Xt {
			p[i] = m.Predict(x, nil)[0]
		}
		want := 0.9
		if spec.Kind == KindKNN {
			want = 0.8 // the noise bit weighs as much as the signal bits in Tanimoto
		}
		if auc := ROCAUC(yt, p); auc < want {
			t.Errorf("%s: held-out ROC-AUC %.3f, want ≥ %g", spec.Kind, auc, want)
		}
	}
}

func TestBundleRoundTrip(t *testing.T) {
	X, Y, _ := synthetic(100, 4)
	m, err := Fit(Spec{Kind: KindGBT, Trees: 5, Depth: 2}, X, Y, DefaultFeaturizer.NumFeatures())
	if err != nil {
		t.Fatal(err)
	}
	b, got, fp := roundTripBundle(t, m)
	p1, p2 := b.Predict(X[0], fp, nil), got.Predict(X[0], fp, nil)
	if p1[0].Probability != p2[0].Probability || !p2[0].Domain.InDomain || p2[0].Domain.Nearest[0] != 1 {
		t.Fatalf("after round trip %+v, before %+v", p2[0], p1[0])
	}
	if _, err := DecodeBundle([]byte("junk")); err == nil {
		t.Fatal("junk decoded")
	}
}

func TestFeaturesAreStable(t *testing.T) {
	m := mustMol(t, "CC(=O)Oc1ccccc1C(=O)O")
	x := DefaultFeaturizer.Features(m)
	if len(x.Idx) != len(x.Val) || int(x.Idx[len(x.Idx)-1]) != DefaultFeaturizer.NumFeatures()-1 {
		t.Fatalf("feature vector shape %d/%d", len(x.Idx), len(x.Val))
	}
	for k := 1; k < len(x.Idx); k++ {
		if x.Idx[k] <= x.Idx[k-1] {
			t.Fatal("feature indices not ascending")
		}
	}
	d := Descriptors(m)
	if math.Abs(d[0]-180.159) > 0.01 || d[3] != 1 || d[15] != 4 {
		t.Fatalf("aspirin descriptors mol_wt %v hbd %v n_O %v", d[0], d[3], d[15])
	}
}

func BenchmarkADCheck(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	fps := make([][]uint64, 10000)
	for i := range fps {
		fps[i] = make([]uint64, 16)
		for j := 0; j < 30+r.Intn(40); j++ {
			k := r.Intn(1024)
			fps[i][k/64] |= 1 << (k % 64)
		}
	}
	ad := NewADSet(fps, 0.3, 3)
	for b.Loop() {
		ad.Check(fps[17])
	}
}

func TestCalibrationIsMonotoneAndFitsFrequencies(t *testing.T) {
	// Raw scores squeezed near 0 while half the cases are positive.
	var y []bool
	var p []float64
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 2000; i++ {
		pos := r.Float64() < 0.5
		z := r.NormFloat64() - 5
		if pos {
			z += 1.5
		}
		y, p = append(y, pos), append(p, sigmoid(z))
	}
	c := FitCalibration(y, p)
	var mean float64
	for i := range p {
		mean += c.Apply(p[i])
	}
	if mean /= float64(len(p)); math.Abs(mean-0.5) > 0.03 {
		t.Fatalf("mean calibrated probability %.3f, want about 0.5", mean)
	}
	if c.Apply(0.01) >= c.Apply(0.02) {
		t.Fatal("calibration is not increasing")
	}
	if (Calibration{}).Apply(0.3) != 0.3 {
		t.Fatal("zero calibration changes p")
	}
}

func TestNeutralize(t *testing.T) {
	cases := map[string]string{
		"CC(=O)Oc1ccccc1C(=O)[O-]":   "CC(=O)Oc1ccccc1C(=O)[OH]",
		"C[NH+](C)CCc1ccccc1":        "C[N](C)CCc1ccccc1",
		"CC[NH3+]":                   "CC[NH2]",
		"c1cc[nH+]cc1":               "c1cc[n]cc1",
		"O=[N+]([O-])c1ccccc1":       "",
		"C[N+](C)(C)C":               "",
		"[NH3+][C@@H](C)C(=O)[O-]":   "[NH2][C@@H](C)C(=O)[OH]",
		"Cn1cnc2c1c(=O)n(C)c(=O)n2C": "",
		"c1ccc2[n-]nnc2c1":           "c1ccc2[nH]nnc2c1",
	}
	for in, want := range cases {
		m, err := chem.ParseSMILES(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Neutralize(m); got != want {
			t.Errorf("Neutralize(%s) = %q, want %q", in, got, want)
		}
	}
	// A salt, a charge state and the neutral parent share one structure key.
	a, b := MolKey(mustMol(t, "[Na+].CC(=O)Oc1ccccc1C(=O)[O-]")), MolKey(mustMol(t, "CC(=O)Oc1ccccc1C(=O)O"))
	if a != b {
		t.Fatal("aspirin sodium salt and aspirin differ after standardisation")
	}
	if MolKey(mustMol(t, "CN(C)CCCN1c2ccccc2CCc2ccccc21")) != MolKey(mustMol(t, "C[NH+](C)CCCN1c2ccccc2CCc2ccccc21")) {
		t.Fatal("protonated imipramine differs from the base")
	}
}

func TestFeatureDigestTracksTheFeatureCode(t *testing.T) {
	a, b := FeatureDigest(DefaultFeaturizer), FeatureDigest(DefaultFeaturizer)
	if a != b || len(a) != 16 {
		t.Fatalf("digest not stable: %q %q", a, b)
	}
	if FeatureDigest(Featurizer{Radius: 2, Bits: 1024}) == a || FeatureDigest(Featurizer{Radius: 3, Bits: 2048}) == a {
		t.Fatal("digest ignores the featurizer settings")
	}
}

// roundTripBundle encodes a one-task bundle of m, with an applicability
// domain of fp, and decodes it again.
func roundTripBundle(t *testing.T, m *Model) (before, after *Bundle, fp []uint64) {
	t.Helper()
	fp = ADFingerprint(mustMol(t, "c1ccccc1O"))
	b := &Bundle{Name: "t", Version: "1.0.0", Featurizer: DefaultFeaturizer, Models: []*Model{m},
		AD:    []*ADSet{NewADSet([][]uint64{fp, fp, fp}, 0.3, 3)},
		Tasks: []Task{{Key: "k", Available: true, Threshold: 0.5, Positive: "active", Negative: "inactive"}}}
	var buf bytes.Buffer
	if err := b.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBundle(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return b, got, fp
}
