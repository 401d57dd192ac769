package apidocs

import (
	// The generated client's runtime: imported here so that go.mod and
	// go.sum keep it (and its modules) for the client built offline below.
	_ "github.com/oapi-codegen/runtime"

	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// The document of the real gateway with every module loaded lints clean
// (lintDocument: libopenapi-validator against the OpenAPI 3.1 schema,
// operationIds, licence, every example against its schema), and a Go
// client generated from it by oapi-codegen (pinned in go.mod as a tool)
// builds and scores a SMILES on that gateway.
func TestOpenAPIDocumentOfTheGatewayLintsAndGeneratesAClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the gateway with every module and builds a generated client")
	}
	gw := harness.Start(t, harness.WithAllModules(), harness.WithEnv("TOXGATE_MODULES_REQUIRE_TOKEN=false"))
	doc := fetch(t, gw.URL+"/openapi.json")
	var index struct {
		Models []struct {
			Routes []struct {
				Path string `json:"path"`
			} `json:"routes"`
		} `json:"models"`
	}
	if err := json.Unmarshal(fetch(t, gw.URL+"/models"), &index); err != nil || len(index.Models) == 0 {
		t.Fatalf("GET /models: %v (%d models)", err, len(index.Models))
	}
	for _, m := range index.Models {
		for _, r := range m.Routes {
			if !strings.Contains(string(doc), `"`+r.Path+`":`) {
				t.Errorf("the document lacks the route %s", r.Path)
			}
		}
	}
	lintDocument(t, doc)
	if t.Failed() {
		return
	}
	generateClient(t, doc, gw.URL)
}

func fetch(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %.300s (%v)", url, res.StatusCode, b, err)
	}
	return b
}

// clientMain calls /hERG/evaluate through the generated client.
const clientMain = `package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"toxgateclient/toxclient"
)

func main() {
	c, err := toxclient.NewClientWithResponses(os.Args[1])
	if err != nil {
		panic(err)
	}
	r, err := c.HergHERGEvaluateWithBodyWithResponse(context.Background(), "application/json", strings.NewReader(` + "`" + `{"smiles":"CCO"}` + "`" + `))
	if err != nil {
		panic(err)
	}
	if r.JSON200 == nil {
		fmt.Fprintf(os.Stderr, "status %d: %s\n", r.StatusCode(), r.Body)
		os.Exit(1)
	}
	fmt.Printf("%s\n", r.Body)
}
`

// generateClient generates a Go client (types and client) from doc with
// oapi-codegen, builds it in a module of its own with a program that
// scores a SMILES through it, and runs that program against base. The
// module resolves its one requirement, oapi-codegen's runtime, from the
// module cache with the versions of this repository's go.sum (no
// network).
func generateClient(t *testing.T, doc []byte, base string) {
	t.Helper()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	root := harness.RepoRoot()
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.json")
	must(t, os.WriteFile(spec, doc, 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "toxclient"), 0o755))

	run := func(wd string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The client's response wrappers get a suffix no schema name ends
	// with: a module's schemas may hold types named like "<Operation>Response".
	cfg := filepath.Join(dir, "oapi-codegen.yaml")
	must(t, os.WriteFile(cfg, []byte("package: toxclient\ngenerate:\n  models: true\n  client: true\noutput: "+
		filepath.Join(dir, "toxclient", "client.go")+"\noutput-options:\n  response-type-suffix: HTTPResponse\n"), 0o644))
	run(root, nil, "tool", "oapi-codegen", "-config", cfg, spec)

	version := strings.TrimSpace(run(root, nil, "list", "-m", "-f", "{{.Version}}", "github.com/oapi-codegen/runtime"))
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"),
		[]byte("module toxgateclient\n\ngo 1.26\n\nrequire github.com/oapi-codegen/runtime "+version+"\n"), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(clientMain), 0o644))
	offline := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}
	run(dir, offline, "build", "-o", filepath.Join(dir, "client"), ".")

	out, err := exec.Command(filepath.Join(dir, "client"), base).CombinedOutput()
	if err != nil {
		t.Fatalf("the generated client's call: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"probability"`) {
		t.Fatalf("the generated client's call answered %s", out)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
