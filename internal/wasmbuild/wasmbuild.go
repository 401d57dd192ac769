// Package wasmbuild builds toxgate modules (Go packages main that use
// toxgate/sdk/module) into WebAssembly reactors, on the host, with the go tool:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o out dir
//
// and then rewrites the module with toxgate/internal/reloop, which turns the jump
// tables of Go's wasm code into direct branches, and, when binaryen's wasm-opt
// is installed, optimises the result with it (OptFlags). The module's Go
// runtime collects garbage with the world stopped (GuestGODEBUG). BuildGo
// skips all three.
//
// Cached builds are keyed by the content of every source file the module depends
// on inside its Go module, so tests build each test module once.
package wasmbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"toxgate/internal/reloop"
)

// env returns the environment of a wasip1 build.
func env() []string {
	return append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
}

// Stage says how far a build goes after the go tool.
type Stage int

const (
	// StageGo is the module exactly as the go tool writes it.
	StageGo Stage = iota
	// StageReloop is rewritten by reloop.
	StageReloop
	// StageOpt is rewritten by reloop and optimised by wasm-opt when it is
	// installed, not finished (a benchmark baseline).
	StageOpt
	// StageFull is rewritten by reloop, optimised by wasm-opt when it is
	// installed, and finished by reloop.Finish: what Build and make produce.
	StageFull
)

// Build compiles the Go main package in dir into the WebAssembly module out,
// rewrites it with reloop, optimises it with wasm-opt when installed and
// finishes it with reloop.Finish (rewrites for wazero's bounds checks). The
// file is written to a temporary name and renamed, so a watcher never sees a
// partial module.
func Build(ctx context.Context, dir, out string) error { return build(ctx, dir, out, StageFull) }

// BuildGo is Build without the reloop and wasm-opt steps: the module exactly
// as the go tool writes it (the baseline of benchmarks).
func BuildGo(ctx context.Context, dir, out string) error { return build(ctx, dir, out, StageGo) }

func build(ctx context.Context, dir, out string, stage Stage) error {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	// A unique temporary name: concurrent builds of the same module must not collide.
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	tmp := f.Name()
	f.Close()
	args := []string{"build", "-buildmode=c-shared", "-trimpath"}
	if stage > StageGo {
		flag, err := godebugFlag(ctx, absDir)
		if err != nil {
			os.Remove(tmp)
			return err
		}
		args = append(args, flag)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "-o", tmp, ".")...)
	cmd.Dir = absDir
	cmd.Env = env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("wasmbuild: building %s: %w\n%s", dir, err, stderr.String())
	}
	if stage >= StageReloop {
		if err := reloopFile(tmp); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("wasmbuild: %s: %w", dir, err)
		}
	}
	if stage >= StageOpt {
		if err := optimize(ctx, tmp); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("wasmbuild: %s: %w", dir, err)
		}
	}
	if stage >= StageFull {
		if err := finishFile(tmp); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("wasmbuild: %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	return nil
}

// GuestGODEBUG is the runtime setting that every build but a StageGo one
// links into the module, after the package's own default GODEBUG: the garbage
// collector marks with the world stopped. Go's wasm port runs on one thread
// and cannot preempt, so its concurrent mark advances only through the
// assists of the allocating code: a cycle stays in its mark phase for about a
// third of the time (11-14 ms of every ~37 ms in the SMILES pipeline, at the
// 4 MB heap of a small module), and meanwhile every pointer write takes the
// write barrier's slow path and every new object is marked. Stopped, the same
// marking takes ~0.8 ms per cycle. The heap goal (GOGC) and so the memory are
// unchanged; a cycle's pause is part of the call that allocates.
const GuestGODEBUG = "gcstoptheworld=1"

// godebugFlag returns the go build flag that sets the module's default
// GODEBUG to the package's own (its go.mod and //go:debug lines) followed by
// GuestGODEBUG. The go tool passes the package's default to the linker
// before the user's flags, and the last value wins, so it must be repeated.
func godebugFlag(ctx context.Context, dir string) (string, error) {
	out, err := goList(ctx, dir, "reading the default GODEBUG of", "-f", "{{.DefaultGODEBUG}}", ".")
	if err != nil {
		return "", err
	}
	v := GuestGODEBUG
	if d := strings.TrimSpace(string(out)); d != "" {
		v = d + "," + v
	}
	return "-ldflags=-X=runtime.godebugDefault=" + v, nil
}

// Cached builds the module in dir into cacheDir unless a build of the same
// sources is there already, and returns the path of the .wasm file. The key is
// the SHA-256 of the Go version, go.sum and every file of every package the
// module depends on inside its own Go module.
func Cached(ctx context.Context, dir, cacheDir string) (string, error) {
	return CachedStage(ctx, dir, cacheDir, StageFull)
}

// CachedStage is Cached for a build that stops at stage.
func CachedStage(ctx context.Context, dir, cacheDir string, stage Stage) (string, error) {
	key, err := SourceHash(ctx, dir)
	if err != nil {
		return "", err
	}
	// A change to reloop's code, or another wasm-opt, is a change to the module.
	suffix := "-go.wasm"
	switch stage {
	case StageReloop:
		h := sha256.Sum256([]byte(key + reloop.SourceDigest() + GuestGODEBUG))
		key, suffix = hex.EncodeToString(h[:]), "-reloop.wasm"
	case StageOpt, StageFull:
		_, optVersion := Optimizer(ctx)
		h := sha256.Sum256([]byte(key + reloop.SourceDigest() + GuestGODEBUG + optVersion + strings.Join(OptFlags, " ")))
		key, suffix = hex.EncodeToString(h[:]), ".wasm"
		if stage == StageOpt {
			suffix = "-opt.wasm"
		}
	}
	out := filepath.Join(cacheDir, filepath.Base(filepath.Clean(dir))+"-"+key[:16]+suffix)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := build(ctx, dir, out, stage); err != nil {
		return "", err
	}
	return out, nil
}

// OptFlags are the wasm-opt arguments applied after reloop: binaryen's -O2
// pipeline, with the features Go's wasm code uses, keeping the name section.
// Binaryen can optimise Go's code once reloop has made the control flow
// structured (it does not see through Go's jump tables); what it gains:
// BenchmarkChemPipeline, wasm-reloop/native beside wasm-opt/native.
var OptFlags = []string{"-O2", "--enable-bulk-memory", "--enable-sign-ext", "--enable-nontrapping-float-to-int", "-g"}

var (
	optOnce    sync.Once
	optPath    string
	optVersion string
)

// Optimizer returns the path and version of binaryen's wasm-opt, or "" and
// "none" when it is not installed or TOXGATE_WASM_OPT is "off".
func Optimizer(ctx context.Context) (path, version string) {
	optOnce.Do(func() {
		optVersion = "none"
		if os.Getenv("TOXGATE_WASM_OPT") == "off" {
			return
		}
		p, err := exec.LookPath("wasm-opt")
		if err != nil {
			return
		}
		out, err := exec.CommandContext(ctx, p, "--version").Output()
		if err != nil {
			return
		}
		optPath, optVersion = p, strings.TrimSpace(string(out))
	})
	return optPath, optVersion
}

// optimize runs wasm-opt on the module in file path, when it is installed.
func optimize(ctx context.Context, path string) error {
	opt, _ := Optimizer(ctx)
	if opt == "" {
		return nil
	}
	out := path + ".opt"
	args := append(append([]string{}, OptFlags...), path, "-o", out)
	cmd := exec.CommandContext(ctx, opt, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.Remove(out)
		return fmt.Errorf("wasm-opt: %w\n%s(TOXGATE_WASM_OPT=off builds without it)", err, stderr.String())
	}
	return os.Rename(out, path)
}

// reloopFile rewrites the module in file path with reloop.
func reloopFile(path string) error {
	return rewriteFile(path, func(b []byte) ([]byte, error) {
		nb, _, err := reloop.Module(b)
		return nb, err
	})
}

// finishFile applies reloop.Finish to the module in file path: the last
// step, after wasm-opt, which would undo it.
func finishFile(path string) error {
	return rewriteFile(path, func(b []byte) ([]byte, error) {
		nb, _, err := reloop.Finish(b)
		return nb, err
	})
}

// rewriteFile replaces the module in file path with rewrite's output.
func rewriteFile(path string, rewrite func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	nb, err := rewrite(b)
	if err != nil {
		return err
	}
	return os.WriteFile(path, nb, 0o644)
}

// DefaultCacheDir is where Cached keeps builds when the caller has no better
// place: the user cache directory, or the temp directory.
func DefaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toxgate", "wasmbuild")
	}
	return filepath.Join(os.TempDir(), "toxgate-wasmbuild")
}

type listedPackage struct {
	Dir    string
	Module *struct {
		Main  bool
		GoMod string
	}
	GoFiles, EmbedFiles, OtherFiles []string
}

// goList runs go list with args in dir for a wasip1 build and returns its
// output; an error says what it was doing (what, as "listing dependencies
// of") and what go list wrote on its standard error.
func goList(ctx context.Context, dir, what string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("wasmbuild: %s %s: %w\n%s", what, dir, err, stderr.String())
	}
	return out, nil
}

// SourceHash returns the hex SHA-256 identifying the sources of the module in dir.
func SourceHash(ctx context.Context, dir string) (string, error) {
	outb, err := goList(ctx, dir, "listing dependencies of", "-deps", "-json=Dir,Module,GoFiles,EmbedFiles,OtherFiles", ".")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", runtime.Version())
	var files []string
	goMods := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(outb))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("wasmbuild: reading go list output: %w", err)
		}
		if p.Module == nil || !p.Module.Main {
			continue // the standard library and pinned dependencies are covered by the Go version and go.sum
		}
		goMods[p.Module.GoMod] = true
		for _, group := range [][]string{p.GoFiles, p.EmbedFiles, p.OtherFiles} {
			for _, f := range group {
				files = append(files, filepath.Join(p.Dir, f))
			}
		}
	}
	for gm := range goMods {
		files = append(files, gm, strings.TrimSuffix(gm, ".mod")+".sum")
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("wasmbuild: %w", err)
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(h, "%s %x\n", filepath.Base(f), sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// All builds every immediate subdirectory of root that holds a module (see
// IsModule) into outDir/<subdirectory>.wasm, through Install with cacheDir,
// and returns the paths written.
func All(ctx context.Context, root, outDir, cacheDir string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("wasmbuild: %w", err)
	}
	var built []string
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() {
			continue
		}
		if !IsModule(dir) {
			continue
		}
		out := filepath.Join(outDir, e.Name()+".wasm")
		if err := Install(ctx, dir, out, cacheDir); err != nil {
			return built, err
		}
		built = append(built, out)
	}
	return built, nil
}

// Install builds the module in dir into out: through Cached in cacheDir (so
// an unchanged module costs only a source hash), or with Build when cacheDir
// is "". out is rewritten, via a temporary file and a rename, only when its
// content changes, so a gateway watching the directory reloads only what
// changed.
func Install(ctx context.Context, dir, out, cacheDir string) error {
	if cacheDir == "" {
		return Build(ctx, dir, out)
	}
	p, err := Cached(ctx, dir, cacheDir)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return fmt.Errorf("wasmbuild: %w", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Chmod(f.Name(), 0o644) // CreateTemp makes it private
	}
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("wasmbuild: writing %s: %w", out, errors.Join(werr, cerr))
	}
	if err := os.Rename(f.Name(), out); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("wasmbuild: %w", err)
	}
	return nil
}

// IsModule reports whether dir holds a module: a main.go, and a Go file that
// imports toxgate/sdk/module or has a //go:wasmexport directive (training
// programs and other commands beside the modules are not modules).
func IsModule(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		return false
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err == nil && (bytes.Contains(b, []byte(`"toxgate/sdk/module"`)) || bytes.Contains(b, []byte("//go:wasmexport"))) {
			return true
		}
	}
	return false
}
