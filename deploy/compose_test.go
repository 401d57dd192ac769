package deploy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"toxgate/gateway/config"
	"toxgate/gateway/harness"
)

// readYAML parses every document of the file at path.
func readYAML(t *testing.T, path string) []doc {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []doc
	dec := yaml.NewDecoder(f)
	for {
		var d doc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
		out = append(out, d)
	}
}

// knownEnv is the set of TOXGATE_* variables the gateway reads.
func knownEnv() map[string]bool {
	out := map[string]bool{"TOXGATE_CONFIG": true}
	for _, k := range config.Keys() {
		out[k.Env] = true
	}
	return out
}

// checkEnvNames reports every TOXGATE_* name that is no configuration key:
// a misspelt one would be ignored by the gateway (with a warning).
func checkEnvNames(t *testing.T, where string, names []string) {
	t.Helper()
	known := knownEnv()
	// store.* is the embedded store's engine (sqlite or postgresql); where
	// the configuration has no such key yet its names go unchecked.
	storeKeys := known["TOXGATE_STORE_BACKEND"]
	for _, n := range names {
		if !strings.HasPrefix(n, "TOXGATE_") || known[n] {
			continue
		}
		if strings.HasPrefix(n, "TOXGATE_STORE_") && !storeKeys {
			t.Logf("%s: %s not checked (no store.* keys in gateway/config)", where, n)
			continue
		}
		t.Errorf("%s sets %s, which is no configuration key (toxgate config keys lists them)", where, n)
	}
}

// compose.yaml has the gateway with a health check on /readyz through the
// image's own probe command (there is no shell), a non-root read-only
// container, and the optional PostgreSQL and S3 services behind profiles,
// each with a health check the gateway waits for.
func TestComposeFile(t *testing.T) {
	docs := readYAML(t, "compose.yaml")
	if len(docs) != 1 {
		t.Fatalf("compose.yaml: %d documents, want 1", len(docs))
	}
	services, _ := at(docs[0], "services").(map[string]any)
	for _, name := range []string{"toxgate", "postgres", "s3"} {
		s := services[name]
		if s == nil {
			t.Fatalf("no service %s", name)
		}
		test, _ := at(s, "healthcheck", "test").([]any)
		if len(test) < 2 || test[0] != "CMD" {
			t.Errorf("service %s: healthcheck test %v, want an exec form [CMD, ...]", name, test)
		}
	}
	gw := services["toxgate"]
	if got := at(gw, "healthcheck", "test"); !sameList(got, "CMD", "/opt/toxgate/bin/toxgate", "probe", "http://127.0.0.1:8080/readyz") {
		t.Errorf("toxgate healthcheck %v, want the image's probe of /readyz", got)
	}
	if at(gw, "read_only") != true || str(gw, "user") != "65532:65532" || str(gw, "cap_drop", 0) != "ALL" {
		t.Errorf("toxgate: read_only %v user %v cap_drop %v, want a read-only non-root container without capabilities", at(gw, "read_only"), at(gw, "user"), at(gw, "cap_drop"))
	}
	if !strings.HasPrefix(str(gw, "volumes", 0), "toxgate-data:/data") || !strings.HasPrefix(str(gw, "tmpfs", 0), "/tmp") {
		t.Errorf("toxgate: volumes %v tmpfs %v, want /data on a volume and /tmp on a tmpfs", at(gw, "volumes"), at(gw, "tmpfs"))
	}
	for dep, profile := range map[string]string{"postgres": "postgresql", "s3": "s3"} {
		if str(services[dep], "profiles", 0) != profile {
			t.Errorf("service %s: profiles %v, want [%s] (optional)", dep, at(services[dep], "profiles"), profile)
		}
		if at(gw, "depends_on", dep, "condition") != "service_healthy" || at(gw, "depends_on", dep, "required") != false {
			t.Errorf("toxgate depends_on %s: %v, want service_healthy, required false", dep, at(gw, "depends_on", dep))
		}
	}
	env, _ := at(gw, "environment").(map[string]any)
	var names []string
	for n := range env {
		names = append(names, n)
	}
	checkEnvNames(t, "compose.yaml", names)
	for _, n := range []string{"TOXGATE_STORE_BACKEND", "TOXGATE_STORE_POSTGRES_URL", "TOXGATE_FILES_BACKEND", "TOXGATE_FILES_S3_BUCKET", "TOXGATE_SERVER_PUBLIC_URL"} {
		if _, ok := env[n]; !ok {
			t.Errorf("compose.yaml: toxgate does not pass %s", n)
		}
	}
}

// Every TOXGATE_* variable the chart sets, in any combination of the
// tested values, is a configuration key.
func TestHelmEnvNames(t *testing.T) {
	for _, values := range []string{"{}", multiReplica, "store: {type: mongodb, mongodb: {existingSecret: m}}\nmetrics: {existingSecret: mt}\n"} {
		objs := render(t, values)
		env := envOf(t, at(objs["Deployment/toxgate"], "spec", "template", "spec", "containers", 0))
		var names []string
		for n := range env {
			names = append(names, n)
		}
		checkEnvNames(t, "the chart", names)
	}
}

// The Istio example (configs/istio-ext-authz.yaml) stays valid: it parses,
// names the Service the chart makes for release toxgate in namespace
// toxgate on its port, and a real gateway answers on its pathPrefix as the
// example's comment says (200 for the catalog, 401 with WWW-Authenticate
// for a model path without a token).
func TestIstioExample(t *testing.T) {
	docs := readYAML(t, filepath.Join("..", "configs", "istio-ext-authz.yaml"))
	kinds := map[string]doc{}
	for _, d := range docs {
		kinds[str(d, "kind")] = d
	}
	for _, k := range []string{"IstioOperator", "AuthorizationPolicy", "VirtualService"} {
		if kinds[k] == nil {
			t.Fatalf("configs/istio-ext-authz.yaml has no %s", k)
		}
	}
	prov := at(kinds["IstioOperator"], "spec", "meshConfig", "extensionProviders", 0)
	authz := at(prov, "envoyExtAuthzHttp")
	if str(at(kinds["AuthorizationPolicy"], "spec", "provider"), "name") != str(prov, "name") {
		t.Errorf("the AuthorizationPolicy's provider %v is not the registered one %q", at(kinds["AuthorizationPolicy"], "spec", "provider"), str(prov, "name"))
	}
	objs := render(t, "{}")
	svc := objs["Service/toxgate"]
	if want := str(svc, "metadata", "name") + ".toxgate.svc.cluster.local"; str(authz, "service") != want {
		t.Errorf("ext_authz service %q, want the chart's %q", str(authz, "service"), want)
	}
	if at(authz, "port") != at(svc, "spec", "ports", 0, "port") {
		t.Errorf("ext_authz port %v, the chart's Service port %v", at(authz, "port"), at(svc, "spec", "ports", 0, "port"))
	}
	prefix := str(authz, "pathPrefix")
	if !regexp.MustCompile(`^/[a-z/]+$`).MatchString(prefix) {
		t.Fatalf("pathPrefix %q", prefix)
	}

	g := harness.Start(t)
	for path, want := range map[string]int{
		prefix + "/api/3/action/package_list": http.StatusOK,
		prefix + "/hERG/evaluate":             http.StatusUnauthorized,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, _, err := g.Do(ctx, http.MethodGet, path, nil, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s: no WWW-Authenticate, which headersToDownstreamOnDeny passes on", path)
		}
	}
}

func sameList(v any, want ...string) bool {
	l, _ := v.([]any)
	if len(l) != len(want) {
		return false
	}
	for i := range l {
		if l[i] != want[i] {
			return false
		}
	}
	return true
}
