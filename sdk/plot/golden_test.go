package plot_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"toxgate/sdk/plot"
)

// goldenPlots are representative plots: the doxorubicin model's (recorded
// under testdata), log and linear axes, many series, NaN, ±Inf, zero and
// negative values, degenerate ranges, dense series and odd sizes.
func goldenPlots(tb testing.TB) map[string]*plot.Plot {
	ps := map[string]*plot.Plot{}
	for name, c := range readDoxoCases(tb) {
		p := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
		p.LogY = true
		for _, n := range c.Names {
			x, y := plot.Thin(c.TimeH, c.NgPerML[n], 500)
			p.Add(doxoLabels[n], x, y)
		}
		ps[name] = p
		// The same curves unthinned, on a linear axis, in a small plot.
		q := plot.New(c.Title+" <linear> & \"raw\"", "time (h)", "ng/mL")
		q.Width, q.Height = 400, 260
		for _, n := range c.Names {
			q.Add(n, c.TimeH, c.NgPerML[n])
		}
		ps[name+"/linear-raw"] = q
		r := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
		r.LogY = true
		for _, n := range c.Names {
			r.Add(n, c.TimeH, c.NgPerML[n])
		}
		ps[name+"/log-raw-noclip"] = r
	}

	x := []float64{0, 1, 2, 3, 4}
	p := plot.New("Decay <test>", "time (h)", "concentration (µM)")
	p.Add("plasma", x, []float64{5, 3, 2, 1, 0.5})
	p.Add("heart & liver", x, []float64{1, 2, 3, 2, 1})
	ps["small-linear"] = p

	p = plot.New("log", "t", "C (ng/mL)")
	p.LogY = true
	p.Add("c", x, []float64{1000, 100, 0, 0.5})
	p.Add("neg", x, []float64{-1, 2, math.NaN(), 3e3, math.Inf(1)})
	ps["small-log"] = p

	ps["empty"] = plot.New("", "x", "y")
	p = plot.New("empty log", "x", "y")
	p.LogY = true
	ps["empty-log"] = p
	p = plot.New("no finite points", "x", "y")
	p.Add("nan", []float64{math.NaN(), 1, math.Inf(-1)}, []float64{1, math.NaN(), 2})
	ps["no-finite"] = p
	p = plot.New("log, nothing positive", "x", "y")
	p.LogY = true
	p.Add("nonpos", []float64{0, 1, 2}, []float64{0, -1, -2})
	ps["log-nonpositive"] = p
	p = plot.New("one point", "x", "y")
	p.Add("pt", []float64{3}, []float64{7})
	ps["one-point"] = p
	p = plot.New("one point log", "x", "y")
	p.LogY = true
	p.Add("pt", []float64{3}, []float64{7})
	ps["one-point-log"] = p
	p = plot.New("constant", "x", "y")
	p.Add("zero", []float64{0, 1, 2}, []float64{0, 0, 0})
	p.Add("negative", []float64{0, 1, 2}, []float64{-4, -4, -4})
	ps["constant"] = p
	p = plot.New("mismatched lengths", "x", "y")
	p.Add("short y", []float64{0, 1, 2, 3}, []float64{1, 2})
	ps["mismatched"] = p

	// Many series (the palette wraps), dense, signed, with gaps.
	p = plot.New("many series", "time (day)", "response (%)")
	p.Width, p.Height = 1600, 900
	for s := range 11 {
		n := 200 + 700*s
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i] = -5 + 30*float64(i)/float64(n-1)
			ys[i] = float64(s-5)*math.Sin(xs[i]*(1+float64(s)/3)) + 0.01*float64(i%7)
			if (i+s)%97 == 0 {
				ys[i] = math.NaN()
			}
		}
		p.Add(fmt.Sprintf("series %d", s), xs, ys)
	}
	ps["many-series"] = p

	// Log axis over many decades.
	p = plot.New("decades", "t", "y")
	p.LogY = true
	for s := range 4 {
		n := 3000
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i] = float64(i) * 0.05
			ys[i] = math.Pow(10, 5-float64(s)*3) * math.Exp(-xs[i]*float64(s+1)*0.2)
		}
		p.Add(fmt.Sprintf("k%d", s), xs, ys)
	}
	ps["log-decades"] = p

	// x not monotonic (a scatter drawn as a line), tiny and huge magnitudes.
	p = plot.New("scatter", "x", "y")
	p.Width, p.Height = 300, 200
	xs, ys := make([]float64, 500), make([]float64, 500)
	for i := range xs {
		xs[i] = 1e-6 * float64((i*7919)%500)
		ys[i] = 1e6 * float64((i*104729)%1000-500)
	}
	p.Add("s", xs, ys)
	ps["scatter-scales"] = p
	p = plot.New("huge log", "x", "y")
	p.LogY = true
	p.Add("h", []float64{0, 1, 2}, []float64{1e-300, 1, 1e300})
	ps["log-huge-range"] = p
	p = plot.New("width zero", "x", "y")
	p.Width, p.Height = 0, -5
	p.Add("a", []float64{-1e5, 2e5}, []float64{0.0001, 0.0004})
	ps["default-size"] = p

	// Markers, dashes, a log x axis, marks in the text.
	p = plot.New("log_{2} FC, C_{max} & 10^{3}", "time (h)", "−log_{10} p")
	p.LogX = true
	p.Add("fit", []float64{2, 10, 100, 336}, []float64{0.1, 0.5, 1.5, 0.7})
	p.Add("data", []float64{2, 6, 24, 240, 336}, []float64{0.2, 0.3, 1.1, 1.9, 0.4}).Markers = true
	p.Add("dashed", []float64{2, 336}, []float64{-1, 2}).Dashed = true
	ps["markers-logx-marks"] = p
	return ps
}

// thinCases are inputs of Thin.
func thinCases(tb testing.TB) map[string][2][]float64 {
	cs := map[string][2][]float64{}
	for name, c := range readDoxoCases(tb) {
		for _, n := range c.Names {
			cs[name+"/"+n] = [2][]float64{c.TimeH, c.NgPerML[n]}
		}
	}
	n := 5000
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = float64(i) * 0.01
		y[i] = float64(i%97) - 40
		if i%211 == 0 {
			y[i] = math.NaN()
		}
		if i%389 == 0 {
			y[i] = math.Inf(1)
		}
	}
	cs["saw"] = [2][]float64{x, y}
	return cs
}

func digest(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func thinDigest(xs, ys []float64) string {
	h := sha256.New()
	var b [8]byte
	for i := range xs {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(xs[i]))
		h.Write(b[:])
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(ys[i]))
		h.Write(b[:])
	}
	return fmt.Sprintf("%d:%x", len(xs), h.Sum(nil))
}

func goldenDigests(tb testing.TB) map[string]string {
	got := map[string]string{}
	ps := goldenPlots(tb)
	for name, p := range ps {
		got["svg "+name] = digest(p.SVG())
	}
	got["stack small-linear+small-log+markers"] = digest(plot.Stack(ps["small-linear"], ps["small-log"], ps["markers-logx-marks"]))
	for name, c := range thinCases(tb) {
		for _, n := range []int{7, 8, 40, 500, 2000} {
			xs, ys := plot.Thin(c[0], c[1], n)
			got[fmt.Sprintf("thin %s n=%d", name, n)] = thinDigest(xs, ys)
		}
	}
	return got
}

const goldenFile = "testdata/golden.sha256"

// TestGoldenSVG checks that the plots' SVG text (and Thin's points) are those
// recorded in testdata/golden.sha256: the SHA-256 of each representative
// plot's SVG. PLOT_UPDATE_GOLDEN=1 rewrites the file (only when the output
// is meant to change).
func TestGoldenSVG(t *testing.T) {
	got := goldenDigests(t)
	if os.Getenv("PLOT_UPDATE_GOLDEN") != "" {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range got {
				if !yield(k) {
					return
				}
			}
		})
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s\t%s\n", got[k], k)
		}
		if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		d, k, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		want[k] = d
	}
	if len(want) != len(got) {
		t.Errorf("%d recorded digests, %d computed", len(want), len(got))
	}
	for k, d := range got {
		if want[k] != d {
			t.Errorf("%s: digest %s, recorded %s", k, d, want[k])
		}
	}
}

// TestThinMatchesReference compares Thin on the recorded curves with the
// reference implementation (ref_test.go).
func TestThinMatchesReference(t *testing.T) {
	for name, c := range thinCases(t) {
		for _, n := range []int{7, 8, 40, 500, 2000} {
			xs, ys := plot.Thin(c[0], c[1], n)
			rx, ry := plot.RefThin(c[0], c[1], n)
			if thinDigest(xs, ys) != thinDigest(rx, ry) {
				t.Errorf("thin %s n=%d differs from the reference", name, n)
			}
		}
	}
}
