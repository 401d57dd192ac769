package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// pkg is one package of the module as `go list` lists it (non-test imports).
type pkg struct {
	ImportPath string
	Imports    []string // direct imports
	Deps       []string // every package it links, transitively
}

// Heavy dependencies that the packages named by noRuntime must not link.
var (
	wazero   = "github.com/tetratelabs/wazero"
	goPlugin = "github.com/hashicorp/go-plugin"
	grpc     = "google.golang.org/grpc"
)

// moduleExceptions are imports of one module's packages by another module,
// each with its reason; every other such import is refused.
var moduleExceptions = map[[2]string]string{
	// tk-3d extends tk-2d's in-vitro model to layers of a microtissue. Moving
	// tk-2d's model, chemistry and viability data to modules/internal would
	// move the data files that the model catalog publishes as tk-2d's
	// (gateway/modelcat publishes a module's own folder).
	{"tk-3d", "tk-2d"}: "tk-3d builds on tk-2d's model and data",
}

// rule is one constraint on the packages under a prefix.
type rule struct {
	name  string
	under []string                                 // import path prefixes the rule applies to
	check func(p pkg, idx map[string]pkg) []string // what p does wrong, one line each
}

// under reports whether path is prefix or below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func underAny(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		if under(path, p) {
			return true
		}
	}
	return false
}

// moduleOf is the model module a package of modules/ belongs to ("herg" for
// toxgate/modules/herg/model, "internal" for modules/internal/...), or "".
func moduleOf(path string) string {
	rest, ok := strings.CutPrefix(path, "toxgate/modules/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// isStd reports whether path is a standard library package (its first
// element has no dot) and not one of module toxgate's.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && first != "toxgate"
}

// linksAny lists, once per prefix, the prefixes of which p links a
// package, with the direct imports of p that bring it in.
func linksAny(p pkg, idx map[string]pkg, prefixes ...string) []string {
	var out []string
	for _, prefix := range prefixes {
		linked := false
		for _, d := range p.Deps {
			linked = linked || under(d, prefix)
		}
		if !linked {
			continue
		}
		var via []string
		for _, imp := range p.Imports {
			if under(imp, prefix) {
				via = append(via, imp)
				continue
			}
			for _, d := range idx[imp].Deps {
				if under(d, prefix) {
					via = append(via, imp)
					break
				}
			}
		}
		out = append(out, fmt.Sprintf("links %s (through %s)", prefix, strings.Join(via, ", ")))
	}
	return out
}

// rules are the import rules of module toxgate.
var rules = []rule{
	{
		name:  "catalog/ is the domain behind the plugin: it imports no gateway package",
		under: []string{"toxgate/catalog"},
		check: func(p pkg, idx map[string]pkg) []string { return linksAny(p, idx, "toxgate/gateway") },
	},
	{
		name:  "the gateway reaches the catalog through the plugin: of catalog/ it imports only the CKAN wire (catalog/ckan) and the file store (catalog/filestore)",
		under: []string{"toxgate/gateway"},
		check: func(p pkg, idx map[string]pkg) []string {
			var out []string
			for _, d := range p.Deps {
				if under(d, "toxgate/catalog") && d != "toxgate/catalog/ckan" && d != "toxgate/catalog/filestore" {
					out = append(out, "links "+d)
				}
			}
			return out
		},
	},
	{
		name:  "the catalog and the identity store link no WebAssembly runtime, go-plugin or gRPC",
		under: []string{"toxgate/catalog", "toxgate/gateway/identity"},
		check: func(p pkg, idx map[string]pkg) []string { return linksAny(p, idx, wazero, goPlugin, grpc) },
	},
	{
		name:  "the configuration, web pages and DCAT link no WebAssembly runtime",
		under: []string{"toxgate/gateway/config", "toxgate/gateway/web", "toxgate/gateway/dcat"},
		check: func(p pkg, idx map[string]pkg) []string { return linksAny(p, idx, wazero) },
	},
	{
		name:  "the plugin contract's types need the standard library alone (the go-plugin glue is plugins/contract/goplugin)",
		under: []string{"toxgate/plugins/contract"},
		check: func(p pkg, idx map[string]pkg) []string {
			if p.ImportPath != "toxgate/plugins/contract" {
				return nil
			}
			n := 0
			for _, d := range p.Deps {
				if !isStd(d) {
					n++
				}
			}
			var via []string
			for _, imp := range p.Imports {
				if !isStd(imp) {
					via = append(via, imp)
				}
			}
			if n == 0 {
				return nil
			}
			return []string{fmt.Sprintf("links packages outside the standard library (%d, through %s)", n, strings.Join(via, ", "))}
		},
	},
	{
		name:  "the gateway's catalog client and CSV cells link the standard library and the plugin contract alone (every part of the gateway imports them)",
		under: []string{"toxgate/gateway/catalogclient", "toxgate/gateway/internal/csvcell"},
		check: func(p pkg, idx map[string]pkg) []string {
			var out []string
			for _, d := range p.Deps {
				if !isStd(d) && d != "toxgate/plugins/contract" {
					out = append(out, "links "+d)
				}
			}
			return out
		},
	},
	{
		name:  "sdk/ is what a model author imports: it imports no module, gateway, catalog or plugin package",
		under: []string{"toxgate/sdk"},
		check: func(p pkg, idx map[string]pkg) []string {
			return linksAny(p, idx, "toxgate/modules", "toxgate/gateway", "toxgate/catalog", "toxgate/plugins")
		},
	},
	{
		name:  "modules share code only through sdk/ and modules/internal/; modules/internal/ imports no module",
		under: []string{"toxgate/modules"},
		check: func(p pkg, idx map[string]pkg) []string {
			self := moduleOf(p.ImportPath)
			var out []string
			for _, d := range p.Imports {
				other := moduleOf(d)
				switch {
				case other == "" || other == self || other == "internal":
				case moduleExceptions[[2]string{self, other}] != "":
				default:
					out = append(out, "imports "+d)
				}
			}
			return out
		},
	},
}

// violations applies rules to pkgs, one line per violation.
func violations(rules []rule, pkgs []pkg) []string {
	idx := make(map[string]pkg, len(pkgs))
	for _, p := range pkgs {
		idx[p.ImportPath] = p
	}
	var out []string
	for _, r := range rules {
		for _, p := range pkgs {
			if !underAny(p.ImportPath, r.under...) {
				continue
			}
			for _, v := range r.check(p, idx) {
				out = append(out, fmt.Sprintf("%s %s\n\trule: %s", p.ImportPath, v, r.name))
			}
		}
	}
	sort.Strings(out)
	return out
}

// listModule lists every package of module toxgate.
func listModule(t *testing.T) []pkg {
	t.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// Every package of the module keeps the import rules.
func TestImportRules(t *testing.T) {
	pkgs := listModule(t)
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	for _, v := range violations(rules, pkgs) {
		t.Error(v)
	}
}

// Each rule refuses what it is about: a package graph with one violation
// of each gives one violation of each.
func TestImportRulesRefuseViolations(t *testing.T) {
	bad := []pkg{
		{ImportPath: "toxgate/catalog", Imports: []string{"toxgate/catalog/search"}, Deps: []string{"toxgate/catalog/search", "toxgate/gateway/httpcore", goPlugin}},
		{ImportPath: "toxgate/catalog/search", Imports: []string{"toxgate/gateway/httpcore", goPlugin}, Deps: []string{"toxgate/gateway/httpcore", goPlugin}},
		{ImportPath: "toxgate/gateway/jobs", Imports: []string{"toxgate/catalog/filestore", "toxgate/catalog/search"}, Deps: []string{"toxgate/catalog/filestore", "toxgate/catalog/search"}},
		{ImportPath: "toxgate/gateway/identity", Imports: []string{grpc + "/codes"}, Deps: []string{grpc + "/codes"}},
		{ImportPath: "toxgate/gateway/modulehost", Imports: []string{wazero + "/api"}, Deps: []string{wazero + "/api"}},
		{ImportPath: "toxgate/gateway/web", Imports: []string{"toxgate/gateway/modulehost"}, Deps: []string{"toxgate/gateway/modulehost", wazero + "/api"}},
		{ImportPath: "toxgate/plugins/contract", Imports: []string{"errors", "go.mongodb.org/mongo-driver/v2/bson"}, Deps: []string{"errors", "go.mongodb.org/mongo-driver/v2/bson"}},
		{ImportPath: "toxgate/sdk/chem", Imports: []string{"toxgate/modules/herg/model"}, Deps: []string{"toxgate/modules/herg/model"}},
		{ImportPath: "toxgate/modules/tk-2d/chem", Imports: []string{"toxgate/modules/pbpk-httk/data", "toxgate/modules/internal/data", "toxgate/modules/tk-2d/viability"}},
		{ImportPath: "toxgate/modules/tk-3d/model", Imports: []string{"toxgate/modules/tk-2d/model"}},
		{ImportPath: "toxgate/modules/internal/train", Imports: []string{"toxgate/modules/clinicaldata/aopfeat"}},
	}
	got := violations(rules, bad)
	want := []string{
		"toxgate/catalog links github.com/hashicorp/go-plugin (through toxgate/catalog/search)",
		"toxgate/catalog links toxgate/gateway (through toxgate/catalog/search)",
		"toxgate/catalog/search links github.com/hashicorp/go-plugin (through github.com/hashicorp/go-plugin)",
		"toxgate/catalog/search links toxgate/gateway (through toxgate/gateway/httpcore)",
		"toxgate/gateway/identity links google.golang.org/grpc (through google.golang.org/grpc/codes)",
		"toxgate/gateway/jobs links toxgate/catalog/search",
		"toxgate/gateway/web links github.com/tetratelabs/wazero (through toxgate/gateway/modulehost)",
		"toxgate/modules/internal/train imports toxgate/modules/clinicaldata/aopfeat",
		"toxgate/modules/tk-2d/chem imports toxgate/modules/pbpk-httk/data",
		"toxgate/plugins/contract links packages outside the standard library (1, through go.mongodb.org/mongo-driver/v2/bson)",
		"toxgate/sdk/chem links toxgate/modules (through toxgate/modules/herg/model)",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+"\n") {
			t.Errorf("violation %d = %q, want %q", i, got[i], w)
		}
	}
}
