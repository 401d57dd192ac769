package pngplot

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

type canvas struct{ img *image.Paletted }

// newCanvas makes a paletted image (white, black, grey and the line palette):
// PNG encodes paletted images without row filters, several times faster.
func newCanvas(w, h int) *canvas {
	pal := color.Palette{color.RGBA{255, 255, 255, 255}, color.RGBA{0, 0, 0, 255}, color.RGBA{220, 220, 220, 255}}
	for _, c := range Palette {
		pal = append(pal, c)
	}
	return &canvas{img: image.NewPaletted(image.Rect(0, 0, w, h), pal)}
}

func (c *canvas) fill(col color.RGBA) {
	idx := uint8(c.img.Palette.Index(col))
	for i := range c.img.Pix {
		c.img.Pix[i] = idx
	}
}

func (c *canvas) rect(x, y, w, h int, col color.RGBA) {
	r := image.Rect(x, y, x+w, y+h).Intersect(c.img.Rect)
	idx := uint8(c.img.Palette.Index(col))
	for j := r.Min.Y; j < r.Max.Y; j++ {
		for i := r.Min.X; i < r.Max.X; i++ {
			c.img.Pix[c.img.PixOffset(i, j)] = idx
		}
	}
}

// line draws from (x0,y0) to (x1,y1) with the given pen width; dashed lines
// alternate 8 px on and 5 px off.
func (c *canvas) line(x0, y0, x1, y1 float64, col color.RGBA, width int, dashed bool) {
	n := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for i := 0; i <= n; i++ {
		if dashed && i%13 >= 8 {
			continue
		}
		t := float64(i) / float64(n)
		x := int(math.Round(x0 + t*(x1-x0)))
		y := int(math.Round(y0 + t*(y1-y0)))
		c.rect(x-(width-1)/2, y-(width-1)/2, width, width, col)
	}
}

// textWidth is the width of s drawn at scale, px.
func textWidth(s string, scale int) int { return len([]rune(s)) * 6 * scale }

// text draws s with its top-left corner at (x, y).
func (c *canvas) text(x, y int, s string, scale int, col color.RGBA) {
	for _, r := range s {
		for row, bits := range glyph(r) {
			for k, b := range bits {
				if b == '#' {
					c.rect(x+k*scale, y+row*scale, scale, scale, col)
				}
			}
		}
		x += 6 * scale
	}
}

// vtext draws s rotated by 90° (reading upwards) starting at (x, y).
func (c *canvas) vtext(x, y int, s string, scale int, col color.RGBA) {
	for _, r := range s {
		for row, bits := range glyph(r) {
			for k, b := range bits {
				if b == '#' {
					c.rect(x+row*scale, y-k*scale, scale, scale, col)
				}
			}
		}
		y -= 6 * scale
	}
}

func (c *canvas) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, c.img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
