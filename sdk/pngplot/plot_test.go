package pngplot

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"testing"
)

func TestPNGDecodesWithLinesAndText(t *testing.T) {
	p := &Plot{Title: "Cell concentration", XLabel: "time (h)", YLabel: "conc. (µM)"}
	p.Add("cells", []float64{0, 1, 2, 4, 8}, []float64{0, 0.5, 0.75, 0.9, 1})
	s, err := p.Base64()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 500 {
		t.Errorf("size %v, want 800×500", b)
	}
	// The series colour must appear (the line was drawn).
	want := Palette[0]
	found := false
	for y := 0; y < 500 && !found; y++ {
		for x := 0; x < 800; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B {
				found = true
				break
			}
		}
	}
	if !found {
		t.Error("series colour not found in the image")
	}
}

func TestLogAxisSkipsNonPositive(t *testing.T) {
	p := &Plot{LogY: true}
	p.Add("a", []float64{0, 1, 2}, []float64{0, 1e-3, 10})
	if _, err := p.PNG(); err != nil {
		t.Fatal(err)
	}
	if ts := ticks(-3, 1, true); len(ts) != 5 || ts[0] != 1e-3 {
		t.Errorf("log ticks %v", ts)
	}
}

func BenchmarkPNG(b *testing.B) {
	x := make([]float64, 200)
	y := make([]float64, 200)
	for i := range x {
		x[i], y[i] = float64(i), float64(i*i)
	}
	for i := 0; i < b.N; i++ {
		p := &Plot{Title: "bench", XLabel: "x", YLabel: "y"}
		p.Add("s", x, y)
		if _, err := p.PNG(); err != nil {
			b.Fatal(err)
		}
	}
}

// The hand-written 4-bit encoder gives the pixels image/png would.
func TestEncode4DecodesToTheCanvas(t *testing.T) {
	c := newCanvas(37, 11)
	c.fill(Palette[0])
	c.line(0, 0, 36, 10, Palette[1], 2, true)
	c.text(1, 1, "Ab1", 1, Palette[6])
	b, err := encode4(c.img)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 11; y++ {
		for x := 0; x < 37; x++ {
			r1, g1, b1, _ := img.At(x, y).RGBA()
			r2, g2, b2, _ := c.img.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				t.Fatalf("pixel %d,%d differs", x, y)
			}
		}
	}
}
