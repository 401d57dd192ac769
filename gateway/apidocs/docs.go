package apidocs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sync"

	"github.com/fasthttp/router"
	swaggerfiles "github.com/swaggo/files/v2"
	"github.com/valyala/fasthttp"

	"toxgate/sdk/abi"
)

// Config configures the documentation.
type Config struct {
	Info Info
	// Actions are the catalog actions to document.
	Actions []Action
	// Modules supplies the loaded modules' manifests; nil documents no models.
	Modules Modules
}

// Docs serves /openapi.json and /docs. Create it with New.
type Docs struct {
	cfg Config

	mu   sync.Mutex
	gen  uint64
	spec []byte
}

// New returns the documentation handlers for cfg.
func New(cfg Config) *Docs {
	if cfg.Info.Title == "" {
		cfg.Info.Title = "toxgate API"
	}
	if cfg.Info.Version == "" {
		cfg.Info.Version = "1"
	}
	return &Docs{cfg: cfg}
}

// Spec returns the OpenAPI document, rebuilt only when the modules changed.
func (d *Docs) Spec() ([]byte, error) {
	var gen uint64
	manifests := d.manifests(&gen)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.spec != nil && d.gen == gen {
		return d.spec, nil
	}
	b, err := json.Marshal(build(d.cfg.Info, d.cfg.Actions, manifests))
	if err != nil {
		return nil, fmt.Errorf("apidocs: encoding OpenAPI document: %w", err)
	}
	d.spec, d.gen = b, gen
	return b, nil
}

func (d *Docs) manifests(gen *uint64) []abi.Manifest {
	if d.cfg.Modules == nil {
		return nil
	}
	g, m := d.cfg.Modules.Manifests()
	*gen = g + 1 // 0 means "never built"
	return m
}

// RegisterRoutes registers GET /openapi.json, GET /docs and GET /docs/{file}.
func (d *Docs) RegisterRoutes(r *router.Router) {
	r.GET("/openapi.json", d.ServeSpec)
	r.GET("/docs", d.ServeUI)
	r.GET("/docs/{file}", d.ServeAsset)
}

// ServeSpec answers the OpenAPI document.
func (d *Docs) ServeSpec(ctx *fasthttp.RequestCtx) {
	b, err := d.Spec()
	if err != nil {
		ctx.Error(err.Error(), fasthttp.StatusInternalServerError)
		return
	}
	ctx.Response.Header.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-cache")
	ctx.SetBody(b)
}

// ServeUI answers the Swagger UI page.
func (d *Docs) ServeUI(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentType("text/html; charset=utf-8")
	ctx.SetBodyString(fmt.Sprintf(indexHTML, d.cfg.Info.Title))
}

// ServeAsset answers the embedded Swagger UI files.
func (d *Docs) ServeAsset(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("file").(string)
	a, ok := assets[name]
	if !ok {
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	ctx.Response.Header.SetContentType(a.ctype)
	ctx.Response.Header.Set("Cache-Control", "public, max-age=86400")
	ctx.SetBody(a.body)
}

type asset struct {
	ctype string
	body  []byte
}

// assets are the files /docs/{file} serves: Swagger UI 5 (which renders
// OpenAPI 3.1) from github.com/swaggo/files/v2, and init.js.
var assets = map[string]asset{
	"swagger-ui.css":       {"text/css; charset=utf-8", swaggerFile("swagger-ui.css")},
	"swagger-ui-bundle.js": {"text/javascript; charset=utf-8", swaggerFile("swagger-ui-bundle.js")},
	"favicon-32x32.png":    {"image/png", swaggerFile("favicon-32x32.png")},
	"init.js":              {"text/javascript; charset=utf-8", []byte(initJS)},
}

// swaggerFile reads one of Swagger UI's embedded files; they are part of
// the binary, so a missing one is a build defect.
func swaggerFile(name string) []byte {
	b, err := fs.ReadFile(swaggerfiles.FS, name)
	if err != nil {
		panic(fmt.Sprintf("apidocs: embedded Swagger UI file %s: %v", name, err))
	}
	return b
}

// Paths are relative so the page works behind a path prefix: from /docs,
// "docs/x" is /docs/x and "openapi.json" is /openapi.json.
const indexHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`

const initJS = `window.ui = SwaggerUIBundle({
  url: new URL("openapi.json", document.baseURI).href,
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
  displayRequestDuration: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
});
`
