package pngplot

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
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
	idx := c.index(col)
	for i := range c.img.Pix {
		c.img.Pix[i] = idx
	}
}

// index is col's palette index. Palette.Index goes through color.Color
// interface calls for every entry: drawing resolves it once per line, text or
// rectangle, not once per pen stamp (a stamp per pixel along a line).
func (c *canvas) index(col color.RGBA) uint8 { return uint8(c.img.Palette.Index(col)) }

func (c *canvas) rect(x, y, w, h int, col color.RGBA) { c.rectIdx(x, y, w, h, c.index(col)) }

// rectIdx fills the rectangle, clipped to the image, with palette index idx.
func (c *canvas) rectIdx(x, y, w, h int, idx uint8) {
	b := c.img.Rect
	x0, y0, x1, y1 := max(x, b.Min.X), max(y, b.Min.Y), min(x+w, b.Max.X), min(y+h, b.Max.Y)
	for j := y0; j < y1; j++ {
		row := c.img.Pix[(j-b.Min.Y)*c.img.Stride:]
		for i := x0; i < x1; i++ {
			row[i-b.Min.X] = idx
		}
	}
}

// line draws from (x0,y0) to (x1,y1) with the given pen width; dashed lines
// alternate 8 px on and 5 px off.
func (c *canvas) line(x0, y0, x1, y1 float64, col color.RGBA, width int, dashed bool) {
	idx := c.index(col)
	n := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for i := 0; i <= n; i++ {
		if dashed && i%13 >= 8 {
			continue
		}
		t := float64(i) / float64(n)
		x := int(math.Round(x0 + t*(x1-x0)))
		y := int(math.Round(y0 + t*(y1-y0)))
		c.rectIdx(x-(width-1)/2, y-(width-1)/2, width, width, idx)
	}
}

// textWidth is the width of s drawn at scale, px.
func textWidth(s string, scale int) int { return len([]rune(s)) * 6 * scale }

// text draws s with its top-left corner at (x, y).
func (c *canvas) text(x, y int, s string, scale int, col color.RGBA) {
	idx := c.index(col)
	for _, r := range s {
		for row, bits := range glyph(r) {
			for k, b := range bits {
				if b == '#' {
					c.rectIdx(x+k*scale, y+row*scale, scale, scale, idx)
				}
			}
		}
		x += 6 * scale
	}
}

// vtext draws s rotated by 90° (reading upwards) starting at (x, y).
func (c *canvas) vtext(x, y int, s string, scale int, col color.RGBA) {
	idx := c.index(col)
	for _, r := range s {
		for row, bits := range glyph(r) {
			for k, b := range bits {
				if b == '#' {
					c.rectIdx(x+row*scale, y-k*scale, scale, scale, idx)
				}
			}
		}
		y -= 6 * scale
	}
}

func (c *canvas) encode() ([]byte, error) {
	if len(c.img.Palette) > 16 {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, c.img); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return encode4(c.img)
}

// zlibWriters keeps zlib writers between plots: a new one allocates ~1 MB of
// compressor state, garbage that costs a wasm module more than the
// compression itself. Reset writers compress exactly as new ones.
var zlibWriters sync.Pool

// encode4 writes a PNG of 4-bit palette indices straight from the Pix array,
// as image/png does for a palette of at most 16 colours but without its
// per-pixel ColorIndexAt interface calls (slow in WebAssembly): signature,
// IHDR, PLTE, one IDAT (zlib, best speed, filter "none" on every row) and IEND.
func encode4(img *image.Paletted) ([]byte, error) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	rowLen := 1 + (w+1)/2
	raw := make([]byte, rowLen*h)
	for y := 0; y < h; y++ {
		src := img.Pix[y*img.Stride : y*img.Stride+w]
		dst := raw[y*rowLen+1 : (y+1)*rowLen] // byte 0: filter none
		// Two pixels per byte. Written so that the compiler proves every index
		// in range: no bounds checks, few live values (in a wasm module, a
		// spilled value in this loop cost 50% of a plot's time).
		for i, s := 0, src; i < len(dst) && len(s) >= 2; i, s = i+1, s[2:] {
			dst[i] = s[0]<<4 | s[1]&0x0f
		}
		if w%2 == 1 {
			dst[w/2] = src[w-1] << 4
		}
	}
	var z bytes.Buffer
	zw, _ := zlibWriters.Get().(*zlib.Writer)
	if zw == nil {
		var err error
		if zw, err = zlib.NewWriterLevel(&z, zlib.BestSpeed); err != nil {
			return nil, err
		}
	} else {
		zw.Reset(&z)
	}
	defer zlibWriters.Put(zw)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8+25+12+3*len(img.Palette)+12+z.Len()+12)
	out = append(out, "\x89PNG\r\n\x1a\n"...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 4, 3 // bit depth 4, colour type 3 (palette)
	out = appendChunk(out, "IHDR", ihdr[:])
	plte := make([]byte, 0, 3*len(img.Palette))
	for _, col := range img.Palette {
		r, g, b, _ := col.RGBA()
		plte = append(plte, byte(r>>8), byte(g>>8), byte(b>>8))
	}
	out = appendChunk(out, "PLTE", plte)
	out = appendChunk(out, "IDAT", z.Bytes())
	return appendChunk(out, "IEND", nil), nil
}

func appendChunk(dst []byte, typ string, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	start := len(dst)
	dst = append(dst, typ...)
	dst = append(dst, data...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}
