// Package ociimage builds toxgate's container image without a container
// engine: a FROM-scratch OCI image holding the static gateway and plugin
// programs, the model modules with their cards and data, CA certificates,
// a configuration for the image's paths and a non-root user, assembled with
// go-containerregistry and written as an OCI layout and as a tarball that
// `docker load` and `podman load` take. gateway/cmd/toxgate-image is its
// command; `make image` runs it. See deploy/README.md.
package ociimage

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and identity inside the image.
const (
	// Root is the folder of the programs (bin/) and the modules' sources of
	// cards and data (modules/).
	Root = "/opt/toxgate"
	// BinDir holds toxgate, its plugins (toxgate-<name>) and modules/*.wasm:
	// the layout of the build's bin directory.
	BinDir = Root + "/bin"
	// Entrypoint is the gateway program.
	Entrypoint = BinDir + "/toxgate"
	// ConfigPath is the image's configuration file (TOXGATE_CONFIG).
	ConfigPath = "/etc/toxgate/toxgate.yaml"
	// CACertsPath is where Go's crypto/x509 looks first on Linux.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	// DataDir is the volume holding everything the gateway writes.
	DataDir = "/data"
	// UID and GID are the numeric user and group the image runs as (no
	// root; numeric so that Kubernetes' runAsNonRoot can check it).
	UID = 65532
	GID = 65532
	// Port is the port the gateway listens on (server.addr of Config).
	Port = 8080
)

// Config is the image's configuration file (ConfigPath).
//
//go:embed toxgate.yaml
var Config []byte

// Spec says what goes into the image.
type Spec struct {
	// BinDir is a build's bin directory: toxgate, toxgate-<plugin> and
	// modules/*.wasm. Every program must be static (CheckStatic).
	BinDir string
	// ModulesDir is the source tree's modules/ folder: each shipped module's
	// MODEL_CARD.md, SOURCES.md and data files, and internal/data (what
	// catalog.models_data_dir publishes). Empty leaves them out.
	ModulesDir string
	// CACerts is the CA bundle to ship (empty: /etc/ssl/certs/ca-certificates.crt,
	// Debian's ca-certificates).
	CACerts string
	// Version, Revision and Source are the OCI labels
	// org.opencontainers.image.version, .revision and .source.
	Version, Revision, Source string
	// Created is the image's creation time and every file's time (zero:
	// the Unix epoch, so that the same inputs give the same image).
	Created time.Time
	// Arch is the platform's architecture (empty: this program's GOARCH).
	Arch string
}

// Build assembles the image of spec: a base layer (CA certificates, user
// database, configuration, /data and /tmp) and an application layer (the
// programs and modules). tmp holds the layers' files while the image is
// written; it must outlive the returned image.
func Build(spec Spec, tmp string) (v1.Image, error) {
	if spec.Version == "" || spec.Revision == "" || spec.Source == "" {
		return nil, fmt.Errorf("ociimage: version, revision and source are required (they become the image's labels)")
	}
	if spec.CACerts == "" {
		spec.CACerts = CACertsPath
	}
	if spec.Arch == "" {
		spec.Arch = runtime.GOARCH
	}
	if spec.Created.IsZero() {
		spec.Created = time.Unix(0, 0).UTC()
	}
	programs, err := findPrograms(spec.BinDir)
	if err != nil {
		return nil, err
	}
	base, err := baseFiles(spec)
	if err != nil {
		return nil, err
	}
	app, err := appFiles(spec, programs)
	if err != nil {
		return nil, err
	}
	var layers []v1.Layer
	for i, files := range [][]file{base, app} {
		path := filepath.Join(tmp, fmt.Sprintf("layer%d.tar.gz", i))
		if err := writeLayer(path, files, spec.Created); err != nil {
			return nil, err
		}
		l, err := tarball.LayerFromFile(path, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, fmt.Errorf("ociimage: layer %s: %w", path, err)
		}
		layers = append(layers, l)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, fmt.Errorf("ociimage: adding layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("ociimage: config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", spec.Arch
	cf.Created = v1.Time{Time: spec.Created}
	cf.Config = imageConfig(spec)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("ociimage: config: %w", err)
	}
	return mutate.CreatedAt(img, v1.Time{Time: spec.Created})
}

// imageConfig is the runtime configuration: user, entrypoint, port,
// volume, environment and labels.
func imageConfig(spec Spec) v1.Config {
	return v1.Config{
		User:         fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint:   []string{Entrypoint},
		Cmd:          []string{"serve"},
		WorkingDir:   DataDir,
		ExposedPorts: map[string]struct{}{fmt.Sprintf("%d/tcp", Port): {}},
		Volumes:      map[string]struct{}{DataDir: {}},
		StopSignal:   "SIGTERM",
		Env: []string{
			"PATH=" + BinDir,
			"HOME=" + DataDir,
			"TMPDIR=/tmp",
			"TOXGATE_CONFIG=" + ConfigPath,
			"SSL_CERT_FILE=" + CACertsPath,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "toxgate",
			"org.opencontainers.image.description": "CKAN-compatible data catalog and WebAssembly model API for toxicology",
			"org.opencontainers.image.version":     spec.Version,
			"org.opencontainers.image.revision":    spec.Revision,
			"org.opencontainers.image.source":      spec.Source,
			"org.opencontainers.image.created":     spec.Created.UTC().Format(time.RFC3339),
		},
	}
}

// findPrograms lists the programs of binDir: toxgate and every
// toxgate-<plugin>, each checked to be static.
func findPrograms(binDir string) ([]string, error) {
	names := []string{"toxgate"}
	plugins, err := filepath.Glob(filepath.Join(binDir, "toxgate-*"))
	if err != nil {
		return nil, err
	}
	for _, p := range plugins {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			names = append(names, filepath.Base(p))
		}
	}
	sort.Strings(names)
	if len(names) < 2 {
		return nil, fmt.Errorf("ociimage: no plugin program (toxgate-*) in %s", binDir)
	}
	for _, n := range names {
		if err := CheckStatic(filepath.Join(binDir, n)); err != nil {
			return nil, fmt.Errorf("ociimage: %w", err)
		}
	}
	return names, nil
}

// baseFiles are the files every toxgate image needs besides the programs.
func baseFiles(spec Spec) ([]file, error) {
	certs, err := os.ReadFile(spec.CACerts)
	if err != nil {
		return nil, fmt.Errorf("ociimage: CA certificates (Debian: apt-get install ca-certificates): %w", err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\ntoxgate:x:%d:%d:toxgate:%s:/sbin/nologin\n", UID, GID, DataDir)
	group := fmt.Sprintf("root:x:0:\ntoxgate:x:%d:\n", GID)
	return []file{
		dir("etc", 0o755, 0), dir("etc/ssl", 0o755, 0), dir("etc/ssl/certs", 0o755, 0),
		data(strings.TrimPrefix(CACertsPath, "/"), certs, 0o644),
		data("etc/passwd", []byte(passwd), 0o644),
		data("etc/group", []byte(group), 0o644),
		dir("etc/toxgate", 0o755, 0),
		data(strings.TrimPrefix(ConfigPath, "/"), Config, 0o644),
		dir(strings.TrimPrefix(DataDir, "/"), 0o750, UID),
		dir("tmp", 0o1777, 0),
	}, nil
}

// appFiles are the programs, the .wasm modules and the modules' cards and
// data files.
func appFiles(spec Spec, programs []string) ([]file, error) {
	root := strings.TrimPrefix(Root, "/")
	bin := strings.TrimPrefix(BinDir, "/")
	out := []file{dir("opt", 0o755, 0), dir(root, 0o755, 0), dir(bin, 0o755, 0), dir(bin+"/modules", 0o755, 0)}
	for _, p := range programs {
		out = append(out, disk(bin+"/"+p, filepath.Join(spec.BinDir, p), 0o755))
	}
	wasm, err := filepath.Glob(filepath.Join(spec.BinDir, "modules", "*.wasm"))
	if err != nil {
		return nil, err
	}
	if len(wasm) == 0 {
		return nil, fmt.Errorf("ociimage: no model modules in %s (make modules builds them)", filepath.Join(spec.BinDir, "modules"))
	}
	sort.Strings(wasm)
	var names []string
	for _, w := range wasm {
		out = append(out, disk(bin+"/modules/"+filepath.Base(w), w, 0o644))
		names = append(names, strings.TrimSuffix(filepath.Base(w), ".wasm"))
	}
	if spec.ModulesDir == "" {
		return out, nil
	}
	out = append(out, dir(root+"/modules", 0o755, 0))
	for _, sub := range append([]string{"internal/data"}, names...) {
		files, err := moduleSources(spec.ModulesDir, sub, root+"/modules")
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// moduleSources are the files of modulesDir/sub the catalog publishes with
// a model (cards, sources, data): everything but source code and tests.
func moduleSources(modulesDir, sub, dest string) ([]file, error) {
	var out []file
	top := filepath.Join(modulesDir, filepath.FromSlash(sub))
	if _, err := os.Stat(top); os.IsNotExist(err) {
		return nil, nil
	}
	err := filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(modulesDir, p)
		if err != nil {
			return err
		}
		name := dest + "/" + filepath.ToSlash(rel)
		switch {
		case d.IsDir() && d.Name() == "testdata":
			return filepath.SkipDir
		case d.IsDir():
			for _, parent := range parents(name, dest) {
				out = appendDir(out, parent)
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		switch filepath.Ext(d.Name()) {
		case ".go", ".rs", ".mod", ".sum":
			return nil
		}
		out = append(out, disk(name, p, 0o644))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ociimage: module files under %s: %w", top, err)
	}
	return out, nil
}

// parents are name and the folders between dest and it, outermost first.
func parents(name, dest string) []string {
	var out []string
	for p := name; p != dest && strings.HasPrefix(p, dest+"/"); p = filepath.ToSlash(filepath.Dir(p)) {
		out = append([]string{p}, out...)
	}
	return out
}

// appendDir adds the folder at name unless files already has it.
func appendDir(files []file, name string) []file {
	for _, f := range files {
		if f.name == name {
			return files
		}
	}
	return append(files, dir(name, 0o755, 0))
}
