package apidocs_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"toxgate/gateway/apidocs"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/modulehost"
	"toxgate/gateway/modulehost/modtest"
)

const token = "tg_test_token_123"

type server struct {
	base string
	host *modulehost.Host
}

// start serves a Host with the example module, the docs and a bearer check on
// model calls, on loopback.
func start(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	modtest.Install(t, "../../modules/example-units", dir, "example-units")
	h, err := modulehost.New(context.Background(), modulehost.Config{ModulesDir: dir},
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	d := apidocs.New(apidocs.Config{
		Info:    apidocs.Info{Title: "toxgate test API", Version: "0.1"},
		Actions: []apidocs.Action{{Name: "package_show", GET: true, Description: "Show a dataset"}, {Name: "package_create", Description: "Create a dataset"}},
		Modules: h,
	})
	r := router.New()
	h.RegisterRoutes(r, func(next fasthttp.RequestHandler) fasthttp.RequestHandler { return next })
	d.RegisterRoutes(r)
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Request.Header.Peek("Authorization")) != "Bearer "+token {
			httpcore.WriteError(ctx, fasthttp.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <token>", "")
			return
		}
		if !h.ServeModel(ctx) {
			httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "no such path", "")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: r.Handler, MaxRequestBodySize: 64 << 20}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(); h.Close(context.Background()) })
	return &server{base: "http://" + ln.Addr().String(), host: h}
}

func get(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

type spec struct {
	OpenAPI    string                    `json:"openapi"`
	Paths      map[string]map[string]any `json:"paths"`
	Components struct {
		SecuritySchemes map[string]map[string]string `json:"securitySchemes"`
		Schemas         map[string]any               `json:"schemas"`
	} `json:"components"`
}

func loadSpec(t *testing.T, base string) spec {
	t.Helper()
	status, _, b := get(t, base+"/openapi.json")
	var s spec
	if err := json.Unmarshal(b, &s); err != nil || status != 200 {
		t.Fatalf("GET /openapi.json = %d %.200s (%v)", status, b, err)
	}
	return s
}

func TestOpenAPIDocumentsModelsCatalogAndAuthAndFollowsModules(t *testing.T) {
	s := start(t)
	doc := loadSpec(t, s.base)
	if doc.OpenAPI != apidocs.OpenAPIVersion {
		t.Fatalf("openapi = %q", doc.OpenAPI)
	}
	op, ok := doc.Paths["/example/units/convert"]["post"].(map[string]any)
	if !ok {
		t.Fatalf("model route missing: %v", keys(doc.Paths))
	}
	// The operation with its input schema (a component).
	b, _ := json.Marshal([]any{op, doc.Components.Schemas["example_units_example_units_convert_input"]})
	for _, want := range []string{`"bearerAuth"`, `"molar_mass"`, `"example":{"from":"mg/L"`, `"422"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("model operation lacks %s: %s", want, b)
		}
	}
	// A number's unit (x-unit) is kept and named in its description.
	if !strings.Contains(string(b), `"x-unit":"g/mol"`) || !strings.Contains(string(b), `needed between mass and molar units [g/mol]`) {
		t.Errorf("model operation lacks the unit of molar_mass: %s", b)
	}
	// Catalog actions document their request fields.
	create, _ := json.Marshal(doc.Paths["/api/3/action/package_create"]["post"])
	for _, want := range []string{`"owner_org"`, `"required":["name"]`, `"example":{"name":"herg-data"}`} {
		if !strings.Contains(string(create), want) {
			t.Errorf("package_create lacks %s: %s", want, create)
		}
	}
	if show, _ := json.Marshal(doc.Paths["/api/3/action/package_show"]["get"]); !strings.Contains(string(show), `"name":"id","required":true`) {
		t.Errorf("package_show GET lacks its id parameter: %s", show)
	}
	if series, _ := json.Marshal(doc.Paths["/example/units/series"]); !strings.Contains(string(series), `"text/csv"`) {
		t.Errorf("table route does not offer text/csv: %s", series)
	}
	if _, ok := doc.Paths["/api/3/action/package_show"]["get"]; !ok {
		t.Errorf("catalog read action has no GET")
	}
	if _, ok := doc.Paths["/api/3/action/package_create"]["get"]; ok {
		t.Errorf("catalog write action has a GET")
	}
	sch := doc.Components.SecuritySchemes
	if sch["bearerAuth"]["scheme"] != "bearer" || sch["ckanToken"]["name"] != "Authorization" || sch["ckanApiKey"]["name"] != "X-CKAN-API-Key" {
		t.Errorf("security schemes = %v", sch)
	}

	// Loading a module regenerates the document.
	if _, err := s.host.Load(context.Background(), modtest.Wasm(t, "../modulehost/testdata/counter1")); err != nil {
		t.Fatal(err)
	}
	if _, ok := loadSpec(t, s.base).Paths["/counter/next"]; !ok {
		t.Fatal("the document does not show a module loaded after start")
	}
	s.host.Remove("counter")
	if _, ok := loadSpec(t, s.base).Paths["/counter/next"]; ok {
		t.Fatal("the document still shows a removed module")
	}
}

func TestSwaggerUIAssetsAreServedLocally(t *testing.T) {
	s := start(t)
	status, hdr, page := get(t, s.base+"/docs")
	if status != 200 || !strings.Contains(string(page), `src="docs/swagger-ui-bundle.js"`) || strings.Contains(string(page), "://") {
		t.Fatalf("/docs = %d %s (%s): it must load only local assets", status, page, hdr.Get("Content-Type"))
	}
	for _, f := range []string{"swagger-ui-bundle.js", "swagger-ui.css", "init.js"} {
		if status, _, b := get(t, s.base+"/docs/"+f); status != 200 || len(b) == 0 {
			t.Errorf("/docs/%s = %d (%d bytes)", f, status, len(b))
		}
	}
	if status, _, _ := get(t, s.base+"/docs/../../etc/passwd"); status == 200 {
		t.Error("path traversal served a file")
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
