package modtest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RustC returns a rustc that has the wasm32-unknown-unknown standard library
// (on Debian: packages rustc, libstd-rust-dev-wasm32 and lld, which `make
// ci-deps` installs), or "" when there is none. A rustup toolchain without
// that target is passed over for Debian's /usr/bin/rustc.
func RustC() string {
	if exec.Command("rust-lld", "-flavor", "wasm", "--version").Run() != nil {
		return "" // the linker rustc uses for wasm32 (Debian: lld)
	}
	for _, rc := range []string{"rustc", "/usr/bin/rustc"} {
		out, err := exec.Command(rc, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(strings.TrimSpace(string(out)), "lib", "rustlib", "wasm32-unknown-unknown")); err == nil {
			return rc
		}
	}
	return ""
}

// RustFlags are the rustc arguments that build a module from one source file
// (the Makefile uses the same).
var RustFlags = []string{"--edition", "2021", "--crate-type", "cdylib", "--target", "wasm32-unknown-unknown",
	"-C", "opt-level=3", "-C", "panic=abort", "-C", "strip=debuginfo", "-C", "lto"}

// RustWasm builds the Rust module source file src into a .wasm (cached by
// source content, as Wasm) and returns its bytes. It skips the test when no
// rustc can build for wasm32 (CI installs one).
func RustWasm(tb testing.TB, src string) []byte {
	tb.Helper()
	rc := RustC()
	if rc == "" {
		tb.Skip("no rustc with the wasm32-unknown-unknown target (Debian: rustc libstd-rust-dev-wasm32 lld)")
	}
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
