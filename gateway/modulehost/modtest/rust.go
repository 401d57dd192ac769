package modtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"toxgate/internal/testenv"
)

// RustC returns a rustc that has the wasm32-unknown-unknown standard library
// (on Debian: packages rustc, libstd-rust-dev-wasm32 and lld, which `make
// ci-deps` installs), or "" when there is none. A rustup toolchain without
// that target is passed over for Debian's /usr/bin/rustc.
func RustC() string {
	rc, _ := testenv.Find(testenv.RustWasm32)
	return rc
}

// RustFlags are the rustc arguments that build a module from one source file
// (the Makefile uses the same).
var RustFlags = []string{"--edition", "2021", "--crate-type", "cdylib", "--target", "wasm32-unknown-unknown",
	"-C", "opt-level=3", "-C", "panic=abort", "-C", "strip=debuginfo", "-C", "lto"}

// RustWasm builds the Rust module source file src into a .wasm (cached by
// source content, as Wasm) and returns its bytes. Without a rustc that
// builds for wasm32 the test skips, or fails under CI (testenv).
func RustWasm(tb testing.TB, src string) []byte {
	tb.Helper()
	rc := testenv.RequireTool(tb, testenv.RustWasm32)
	code, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(code)
	out := filepath.Join(CacheDir(), strings.TrimSuffix(filepath.Base(src), ".rs")+"-rust-"+hex.EncodeToString(sum[:8])+".wasm")
	mu.Lock()
	defer mu.Unlock()
	if b, err := os.ReadFile(out); err == nil {
		return b
	}
	if err := os.MkdirAll(CacheDir(), 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp := out + ".tmp"
	cmd := exec.Command(rc, append(append([]string(nil), RustFlags...), "-o", tmp, src)...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building %s: %v\n%s", src, err, msg)
	}
	if err := os.Rename(tmp, out); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
