package web

import (
	"strconv"
	"strings"
)

// Bounds of the molecule drawings. The server marks at most DepictPerTable
// cells of a table for drawing, and only SMILES of at most DepictMaxSMILES
// bytes; the page's script (static/chem.js) reads both from its script
// element and draws at most DepictPerPage structures on a page, whatever the
// markup holds (the model form's own drawings of typed SMILES included).
const (
	DepictPerTable  = 100
	DepictPerPage   = 120
	DepictMaxSMILES = 300
	// DepictInputLines is how many lines of a model form's SMILES box are
	// drawn under it while one types.
	DepictInputLines = 12
)

// tableCell is one cell of a table the pages show. Depict marks a SMILES
// the page's script draws next to its text.
type tableCell struct {
	Text   string
	Depict bool
}

// smilesColumn reports whether a column holds SMILES, by its name
// ("smiles", "SMILES", "canonical_smiles", "smiles_in", ...), the rule the
// scoring form uses to pick its SMILES column.
func smilesColumn(name string) bool {
	return strings.Contains(strings.ToLower(name), "smiles")
}

// depictable reports whether s is worth handing to the drawing script: not
// empty, not longer than DepictMaxSMILES, one line. Anything else stays text.
func depictable(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && len(s) <= DepictMaxSMILES && !strings.ContainsAny(s, "\r\n")
}

// depictCells returns rows as cells, marking for drawing the cells of the
// SMILES columns of header, at most DepictPerTable of them.
func depictCells(header []string, rows [][]string) [][]tableCell {
	cols := make([]bool, len(header))
	some := false
	for i, h := range header {
		cols[i] = smilesColumn(h)
		some = some || cols[i]
	}
	left := DepictPerTable
	out := make([][]tableCell, len(rows))
	for i, row := range rows {
		cells := make([]tableCell, len(row))
		for j, v := range row {
			cells[j].Text = v
			if some && left > 0 && j < len(cols) && cols[j] && depictable(v) {
				cells[j].Depict = true
				left--
			}
		}
		out[i] = cells
	}
	return out
}

// Cells is the preview's table with its SMILES marked for drawing.
func (p *preview) Cells() [][]tableCell { return depictCells(p.Header, p.Rows) }

// Cells is the result's table with its SMILES marked for drawing.
func (m *modelResult) Cells() [][]tableCell { return depictCells(m.Columns, m.Rows) }

// depictAttrs are the bounds the drawing script reads from its element.
func depictAttrs() map[string]string {
	return map[string]string{
		"PerPage":    strconv.Itoa(DepictPerPage),
		"MaxSMILES":  strconv.Itoa(DepictMaxSMILES),
		"InputLines": strconv.Itoa(DepictInputLines),
	}
}
