package wasmrt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRestoreSnapshot: whatever a snapshot file holds, Restore answers a
// module or ErrStaleSnapshot, never panics, and restores only a snapshot
// of this build whose code file exists and whose manifest is valid.
func FuzzRestoreSnapshot(f *testing.F) {
	code := []byte("\x00asm\x01\x00\x00\x00")
	dir := f.TempDir()
	const codeSHA = "4e1a7e8bcdb0f36e3b13b8e8b3b0d4b0d7c1b7bd2f1c4a9f3c8f5f0a3d8c2b1a"
	if err := os.WriteFile(filepath.Join(dir, codeSHA+".wasm"), code, 0o600); err != nil {
		f.Fatal(err)
	}
	good, _ := json.Marshal(Snapshot{Format: snapshotFormat, Host: hostFingerprint(), SHA256: "ab", Size: 8, CodeSHA256: codeSHA, Fuel: true,
		Manifest: json.RawMessage(`{"name":"m","version":"1.0.0","routes":[{"path":"/m/run","input_schema":{"type":"object"},"output":{}}]}`)})
	f.Add(good, "ab")
	f.Add([]byte(`{}`), "")
	f.Add([]byte(`{"format":1,"host":"x","manifest":"not json"}`), "ab")
	f.Add([]byte(`{"code_sha256":"../../etc/passwd","format":1}`), "ab")
	f.Fuzz(func(t *testing.T, b []byte, sha string) {
		var s Snapshot
		if json.Unmarshal(b, &s) != nil {
			return
		}
		m, err := Restore(s, sha, Options{CodeDir: dir})
		if err != nil {
			return
		}
		man := m.Manifest()
		if s.Host != hostFingerprint() || s.SHA256 != sha || man.Validate() != nil {
			t.Fatalf("restored a snapshot that does not fit: %+v", s)
		}
		if filepath.Dir(m.codeFile) != dir {
			t.Fatalf("code file outside the code dir: %s", m.codeFile)
		}
	})
}
