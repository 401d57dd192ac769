package catalog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayersKeepTheirParts checks the package's layering by its source:
// only the read model's files (readmodel*.go) take the read model's lock,
// and only the store's files (store*.go) touch the collections of the
// records, the claims and the change marker; actions go through the
// read model's methods and the write path (mutate, insert, purge).
func TestLayersKeepTheirParts(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	storeColls := map[string]bool{"datasets": true, "orgs": true, "vocabs": true, "claims": true, "changes": true, "changeSeq": true}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		readModelFile := strings.HasPrefix(name, "readmodel")
		storeFile := strings.HasPrefix(name, "store")
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if sel.Sel.Name == "mu" && !readModelFile && lastName(sel.X) == "st" {
				t.Errorf("%s: takes the read model's lock outside readmodel*.go", fset.Position(sel.Pos()))
			}
			if storeColls[sel.Sel.Name] && lastName(sel.X) == "c" && !storeFile {
				t.Errorf("%s: uses the %s collection outside store*.go", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}

// lastName is the last identifier of a selector chain (s.st -> "st").
func lastName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
