package ociimage

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"toxgate/gateway/config"
	"toxgate/gateway/harness"
	"toxgate/internal/testenv"
)

// A dynamically linked program (the system's /bin/true, linked against
// libc) and a file that is no ELF are refused, naming the cure.
func TestCheckStaticRefuses(t *testing.T) {
	if err := CheckStatic("/bin/true"); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("CheckStatic(/bin/true) = %v, want a refusal naming CGO_ENABLED=0", err)
	}
	p := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckStatic(p); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Errorf("CheckStatic(script) = %v, want not an ELF", err)
	}
}

// The image refuses a bin directory whose gateway is dynamically linked,
// before writing anything.
func TestBuildRefusesDynamicProgram(t *testing.T) {
	bin := t.TempDir()
	for _, n := range []string{"toxgate", "toxgate-catalog"} {
		b, err := os.ReadFile("/bin/true")
		if err != nil {
			t.Skip("no /bin/true to stand for a dynamically linked program")
		}
		if err := os.WriteFile(filepath.Join(bin, n), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Build(Spec{BinDir: bin, Version: "v", Revision: "r", Source: "s"}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Fatalf("Build = %v, want a refusal of the dynamically linked program", err)
	}
}

// The image's configuration file is valid for the gateway and points at the
// image's paths.
func TestImageConfigLoads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "toxgate.yaml")
	if err := os.WriteFile(p, Config, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p, nil)
	if err != nil {
		t.Fatalf("the image's toxgate.yaml does not load: %v", err)
	}
	for key, c := range map[string][2]string{
		"plugins.programs.catalog": {cfg.Plugins.Programs["catalog"], BinDir + "/toxgate-catalog"},
		"modules.dir":              {cfg.Modules.Dir, BinDir + "/modules"},
		"modules.cache_dir":        {cfg.Modules.CacheDir, DataDir + "/wazero-cache"},
		"mongodb.data_dir":         {cfg.MongoDB.DataDir, DataDir + "/store"},
		"catalog.models_data_dir":  {cfg.Catalog.ModelsDataDir, Root + "/modules"},
		"server.addr":              {cfg.Server.Addr, "0.0.0.0:8080"},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", key, c[0], c[1])
		}
	}
}

// TestBuildImage builds the static gateway and catalog plugin, makes the
// image from them and the modules of the bin directory, writes the tarball
// and the OCI layout, reads both back and checks what a container runtime
// sees: user, entrypoint, port, volume, labels; static programs that run;
// every module; CA certificates; no shell; and podman loads the tarball
// and runs the gateway from it.
func TestBuildImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gateway and the plugin statically (minutes on a cold cache)")
	}
	root := harness.RepoRoot()
	modules := filepath.Join(os.Getenv("TOXGATE_BIN_DIR"), "modules")
	if os.Getenv("TOXGATE_BIN_DIR") == "" {
		modules = filepath.Join(root, "bin", "modules")
	}
	wasm, _ := filepath.Glob(filepath.Join(modules, "*.wasm"))
	if len(wasm) == 0 {
		if testenv.CI() {
			t.Fatalf("no modules in %s (make modules builds them)", modules)
		}
		t.Skipf("no modules in %s (make modules builds them)", modules)
	}
	testenv.RequireTool(t, testenv.CACerts)
	bin := t.TempDir()
	buildStatic(t, root, bin, "toxgate", "./gateway/cmd/toxgate")
	buildStatic(t, root, bin, "toxgate-catalog", "./plugins/catalog")
	if err := os.Symlink(modules, filepath.Join(bin, "modules")); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	spec := Spec{BinDir: bin, ModulesDir: filepath.Join(root, "modules"), Version: "v9.9.9-test", Revision: "0123456789abcdef", Source: "https://example.org/toxgate"}
	img, err := Build(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const tag = "toxgate:v9.9.9-test"
	tarPath, layoutDir := filepath.Join(out, "toxgate-image.tar"), filepath.Join(out, "oci")
	if err := WriteTarball(img, tag, tarPath); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(img, tag, layoutDir); err != nil {
		t.Fatal(err)
	}

	ref, err := name.NewTag(tag)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := tarball.ImageFromPath(tarPath, &ref)
	if err != nil {
		t.Fatalf("the tarball does not read back: %v", err)
	}
	// The docker-save format keeps the config and the layers as they are
	// (its manifest is rebuilt by the loader, so the manifest digest is not
	// kept): compare those.
	want, _ := img.Digest()
	if got, want := digests(t, loaded), digests(t, img); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tarball config and layers %v, built %v", got, want)
	}
	checkLayout(t, layoutDir, tag, want)
	checkConfig(t, loaded, spec)
	files := checkFiles(t, loaded, wasm)

	// The programs in the image are static and run anywhere: the gateway
	// prints the version it was stamped with.
	exe := filepath.Join(t.TempDir(), "toxgate")
	if err := os.WriteFile(exe, files[strings.TrimPrefix(Entrypoint, "/")], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckStatic(exe); err != nil {
		t.Error(err)
	}
	got, err := exec.Command(exe, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "image-test" {
		t.Errorf("toxgate --version from the image: %q, %v", got, err)
	}

	// A container engine loads the tarball and runs it.
	runImage(t, tarPath)
}

// buildStatic builds pkg as a static program named n in bin.
func buildStatic(t *testing.T, root, bin, n, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X toxgate/internal/version.Version=image-test", "-o", filepath.Join(bin, n), pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s with CGO_ENABLED=0: %v\n%s", pkg, err, out)
	}
}

// checkLayout reads the OCI layout back: one manifest, named tag, the
// built image.
func checkLayout(t *testing.T, dir, tag string, want v1.Hash) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the OCI layout does not read back: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != want || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != tag {
		t.Errorf("layout index %+v, want one manifest %s named %s", m.Manifests, want, tag)
	}
}

// checkConfig checks the runtime configuration a container engine reads.
func checkConfig(t *testing.T, img v1.Image, spec Spec) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (numeric, not root)", c.User)
	}
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != Entrypoint {
		t.Errorf("entrypoint %v, want [%s]", c.Entrypoint, Entrypoint)
	}
	if _, ok := c.ExposedPorts["8080/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v, want 8080/tcp", c.ExposedPorts)
	}
	if _, ok := c.Volumes[DataDir]; !ok {
		t.Errorf("volumes %v, want %s", c.Volumes, DataDir)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.version":  spec.Version,
		"org.opencontainers.image.revision": spec.Revision,
		"org.opencontainers.image.source":   spec.Source,
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if !contains(c.Env, "TOXGATE_CONFIG="+ConfigPath) {
		t.Errorf("env %v lacks TOXGATE_CONFIG", c.Env)
	}
	if cf.OS != "linux" || cf.Architecture == "" {
		t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
	}
}

// checkFiles walks the image's file system and returns the programs' bytes
// by path.
func checkFiles(t *testing.T, img v1.Image, wasm []string) map[string][]byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	heads := map[string]*tar.Header{}
	progs := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n := strings.TrimSuffix(h.Name, "/")
		heads[n] = h
		if strings.HasPrefix(n, "opt/toxgate/bin/toxgate") || n == "etc/toxgate/toxgate.yaml" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			progs[n] = b
		}
		if strings.HasSuffix(n, ".go") || strings.HasSuffix(n, ".rs") {
			t.Errorf("source file %s in the image", n)
		}
	}
	for _, shell := range []string{"bin/sh", "usr/bin/sh", "bin/bash", "bin/busybox"} {
		if _, ok := heads[shell]; ok {
			t.Errorf("the image has a shell: %s", shell)
		}
	}
	need := []string{"opt/toxgate/bin/toxgate", "opt/toxgate/bin/toxgate-catalog", "etc/ssl/certs/ca-certificates.crt",
		"etc/toxgate/toxgate.yaml", "etc/passwd", "opt/toxgate/modules/herg/MODEL_CARD.md", "opt/toxgate/modules/internal/data/SOURCES.md"}
	for _, w := range wasm {
		need = append(need, "opt/toxgate/bin/modules/"+filepath.Base(w))
	}
	for _, n := range need {
		h, ok := heads[n]
		switch {
		case !ok:
			t.Errorf("%s missing from the image", n)
		case h.Size == 0:
			t.Errorf("%s is empty", n)
		}
	}
	for _, p := range []string{"opt/toxgate/bin/toxgate", "opt/toxgate/bin/toxgate-catalog"} {
		if h := heads[p]; h != nil && (h.Mode&0o111 == 0 || h.Uid != 0) {
			t.Errorf("%s: mode %o owner %d, want executable and owned by root (not writable by the user)", p, h.Mode, h.Uid)
		}
	}
	if string(progs["etc/toxgate/toxgate.yaml"]) != string(Config) {
		t.Errorf("etc/toxgate/toxgate.yaml differs from Config")
	}
	if h := heads["data"]; h == nil || h.Uid != UID || h.Typeflag != tar.TypeDir {
		t.Errorf("/data: %+v, want a folder owned by %d", h, UID)
	}
	if h := heads["tmp"]; h == nil || h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp: %+v, want mode 1777", h)
	}
	return progs
}

// digests are the image's config digest and its layers' digests.
func digests(t *testing.T, img v1.Image) []string {
	t.Helper()
	c, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{c.String()}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.String())
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
