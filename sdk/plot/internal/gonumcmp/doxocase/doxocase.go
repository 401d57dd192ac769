// Package doxocase reads the doxorubicin runs recorded under sdk/plot/testdata
// and draws them with sdk/plot, without gonum/plot (for the size of a wasm
// program that draws with sdk/plot alone).
package doxocase

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"

	"toxgate/sdk/plot"
)

// Case is one recorded doxorubicin run (sdk/plot/testdata/doxorubicin-*.json.gz).
type Case struct {
	Title   string               `json:"title"`
	TimeH   []float64            `json:"time_h"`
	Names   []string             `json:"names"`
	NgPerML map[string][]float64 `json:"ng_per_mL"`
}

// Read reads a recorded run.
func Read(path string) (*Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var c Case
	if err := json.NewDecoder(z).Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// SDK draws c with sdk/plot as the doxorubicin model does.
func SDK(c *Case) string {
	p := plot.New(c.Title, "time (h)", "concentration (ng/mL)")
	p.LogY = true
	for _, name := range c.Names {
		x, y := plot.Thin(c.TimeH, c.NgPerML[name], 500)
		p.Add(name, x, y)
	}
	return p.SVG()
}
