// Package testenv finds the programs some tests need beyond Go (a browser,
// PostgreSQL, a Rust compiler for wasm32, binaryen's wasm-opt, Python's
// rdflib) and decides what a test does without one: it skips, and the skip
// is recorded for the summary `make test` prints at the end; under CI it
// fails, because CI installs every tool (`make ci-deps`) and a skip there
// would hide a broken install.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Tool is a program some tests need that `go test` cannot provide.
type Tool struct {
	// Name is what a skip names as missing.
	Name string
	// Debian lists the Debian packages that provide it (what `make ci-deps`
	// installs, and `make test` when it may).
	Debian string
	// Make, when set, is the make target that builds it from the Go
	// module proxy (instead of a Debian package).
	Make string
	find func() (string, error)
}

// The tools the tests look for.
var (
	// Chromium is a headless browser for the browser tests (its path).
	Chromium = Tool{Name: "chromium", Debian: "chromium", find: findChromium}
	// PostgreSQL is the server of the DataStore tests (the directory of
	// initdb and postgres).
	PostgreSQL = Tool{Name: "PostgreSQL", Debian: "postgresql", find: findPostgres}
	// RustWasm32 is a rustc with the wasm32-unknown-unknown standard
	// library and its linker, for the Rust module (the rustc to run).
	RustWasm32 = Tool{Name: "rustc with the wasm32 target", Debian: "rustc libstd-rust-dev-wasm32 lld", find: findRustWasm32}
	// WasmOpt is binaryen's optimiser of the module build (its path).
	WasmOpt = Tool{Name: "wasm-opt", Debian: "binaryen", find: findWasmOpt}
	// RDFLib is a python3 that imports rdflib, which parses the DCAT
	// output (the interpreter to run).
	RDFLib = Tool{Name: "python3 with rdflib", Debian: "python3-rdflib", find: findRDFLib}
	// Bibutils converts BibTeX and RIS to MODS XML (bib2xml, ris2xml),
	// the reference parsers of the citation tests (the directory of the
	// programs).
	Bibutils = Tool{Name: "bibutils", Debian: "bibutils", find: findBibutils}
	// CiteProc is a python3 that imports citeproc-py, a CSL processor that
	// formats the CSL-JSON citations (the interpreter to run).
	CiteProc = Tool{Name: "python3 with citeproc-py", Debian: "python3-citeproc", find: findCiteProc}
	// XMLLint is libxml2's xmllint, which validates the DataCite XML
	// against DataCite's XML Schema (its path).
	XMLLint = Tool{Name: "xmllint", Debian: "libxml2-utils", find: findXMLLint}
	// S3Server is Versity's versitygw, the S3-compatible server of the
	// file store's tests, built by make s3-server into bin/tools (the
	// program's path).
	S3Server = Tool{Name: "versitygw", Make: "s3-server", find: findS3Server}
	// OAuth2Proxy is oauth2-proxy, the relying party of the OpenID
	// Connect provider's tests (its path). It is no Debian package: make
	// deps and ci-deps build it from the Go module proxy into the bin
	// directory (TOXGATE_BIN_DIR).
	OAuth2Proxy = Tool{Name: "oauth2-proxy", Make: "oauth2-proxy", find: findOAuth2Proxy}
	// Helm is Helm's own command, which lints and renders the chart in
	// deploy/helm (its path), built by make helm from the Go module proxy
	// into bin/tools.
	Helm = Tool{Name: "helm", Make: "helm", find: findHelm}
	// CACerts is Debian's CA bundle, which the container image ships (its
	// path).
	CACerts = Tool{Name: "CA certificates", Debian: "ca-certificates", find: findCACerts}
	// HAProxy is the load balancer of the cluster test (its path).
	HAProxy = Tool{Name: "haproxy", Debian: "haproxy", find: findHAProxy}
	// Podman is a container engine that loads and runs the image (its
	// path), with runc as its runtime.
	Podman = Tool{Name: "podman with runc", Debian: "podman runc", find: findPodman}
)

func findPodman() (string, error) {
	p, err := exec.LookPath("podman")
	if err != nil {
		return "", errors.New("no podman on PATH")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		return "", errors.New("no runc on PATH (podman's runtime here)")
	}
	return p, nil
}

func findHAProxy() (string, error) {
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", errors.New("no haproxy on PATH or in /usr/sbin")
}

// EnvSkipLog names the file to which Missing appends one line per skip
// (tool, Debian packages, test, tab-separated); `make test` sets it and
// prints the summary.
const EnvSkipLog = "TOXGATE_SKIP_LOG"

// CI reports whether the tests run under CI: the variable CI is set to
// anything but "", "0" or "false".
func CI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "0" && v != "false"
}

// Find returns the tool's path (see each Tool for what it names), or an
// error saying what was looked for.
func Find(tool Tool) (string, error) { return tool.find() }

// RequireTool returns the tool's path, or ends tb through Missing.
func RequireTool(tb testing.TB, tool Tool) string {
	tb.Helper()
	p, err := Find(tool)
	if err != nil {
		Missing(tb, tool, err.Error())
	}
	return p
}

// Missing ends tb because tool is not installed (detail says what was
// looked for): under CI it fails; otherwise it records the skip in the
// file named by EnvSkipLog, if any, and skips.
func Missing(tb testing.TB, tool Tool, detail string) {
	tb.Helper()
	msg := fmt.Sprintf("no %s (%s); Debian: apt-get install %s, or make ci-deps", tool.Name, detail, tool.Debian)
	if tool.Make != "" {
		msg = fmt.Sprintf("no %s (%s); make %s builds it, as make ci-deps does", tool.Name, detail, tool.Make)
	}
	if CI() {
		tb.Fatalf("%s; CI is set, so this is a failure", msg)
	}
	if path := os.Getenv(EnvSkipLog); path != "" {
		if err := appendLine(path, tool.Name+"\t"+tool.Debian+"\t"+tb.Name()+"\n"); err != nil {
			tb.Logf("testenv: recording the skip: %v", err)
		}
	}
	tb.Skip(msg)
}

// appendLine appends line to the file at path in one write, so that test
// processes running at once do not interleave their lines.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func findOAuth2Proxy() (string, error) {
	if dir := os.Getenv("TOXGATE_BIN_DIR"); dir != "" {
		p := filepath.Join(dir, "oauth2-proxy")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("oauth2-proxy"); err == nil {
		return p, nil
	}
	return "", errors.New("no oauth2-proxy in $TOXGATE_BIN_DIR or on PATH")
}

func findChromium() (string, error) {
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s on PATH", strings.Join(names, ", "))
}

func findPostgres() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no initdb under /usr/lib/postgresql/*/bin")
}

// findRustWasm32 passes over a rustup toolchain without the wasm32 target
// for Debian's /usr/bin/rustc.
func findRustWasm32() (string, error) {
	if exec.Command("rust-lld", "-flavor", "wasm", "--version").Run() != nil {
		return "", errors.New("no rust-lld, the linker rustc uses for wasm32")
	}
	for _, rc := range []string{"rustc", "/usr/bin/rustc"} {
		out, err := exec.Command(rc, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "lib", "rustlib", "wasm32-unknown-unknown")); err == nil {
			return rc, nil
		}
	}
	return "", errors.New("no rustc on PATH or at /usr/bin/rustc has the wasm32-unknown-unknown standard library")
}

func findWasmOpt() (string, error) {
	p, err := exec.LookPath("wasm-opt")
	if err != nil {
		return "", errors.New("no wasm-opt on PATH")
	}
	return p, nil
}

// findRDFLib tries python3 on the PATH, then Debian's /usr/bin/python3.
func findRDFLib() (string, error) {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import rdflib").Run() == nil {
			return p, nil
		}
	}
	return "", errors.New("neither python3 on PATH nor /usr/bin/python3 imports rdflib")
}

// findHelm looks for helm in TOXGATE_HELM, then in bin/tools of the
// module's root (where make helm puts it), then on PATH.
func findHelm() (string, error) {
	if p := os.Getenv("TOXGATE_HELM"); p != "" {
		return p, nil
	}
	if p := inRootTools("helm"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p, nil
	}
	return "", errors.New("not in TOXGATE_HELM, bin/tools/helm or on PATH")
}

func findCACerts() (string, error) {
	const p = "/etc/ssl/certs/ca-certificates.crt"
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		return "", errors.New("no " + p)
	}
	return p, nil
}

func findBibutils() (string, error) {
	p, err := exec.LookPath("bib2xml")
	if err != nil {
		return "", errors.New("no bib2xml on PATH")
	}
	if _, err := exec.LookPath("ris2xml"); err != nil {
		return "", errors.New("no ris2xml on PATH")
	}
	return filepath.Dir(p), nil
}

// findCiteProc tries python3 on the PATH, then Debian's /usr/bin/python3.
func findCiteProc() (string, error) {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import citeproc").Run() == nil {
			return p, nil
		}
	}
	return "", errors.New("neither python3 on PATH nor /usr/bin/python3 imports citeproc")
}

func findXMLLint() (string, error) {
	p, err := exec.LookPath("xmllint")
	if err != nil {
		return "", errors.New("no xmllint on PATH")
	}
	return p, nil
}

// inRootTools is bin/tools/name under the module's root (the nearest
// folder up from the working directory with a go.mod), or "".
func inRootTools(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "bin", "tools", name)
			if _, err := os.Stat(p); err == nil {
				return p
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// findS3Server looks for versitygw in TOXGATE_S3_SERVER, then in bin/tools
// of the module's root (where make s3-server puts it), then on PATH.
func findS3Server() (string, error) {
	if p := os.Getenv("TOXGATE_S3_SERVER"); p != "" {
		return p, nil
	}
	if dir, err := os.Getwd(); err == nil {
		for ; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				p := filepath.Join(dir, "bin", "tools", "versitygw")
				if _, err := os.Stat(p); err == nil {
					return p, nil
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	return "", errors.New("not in TOXGATE_S3_SERVER, bin/tools/versitygw or on PATH")
}
