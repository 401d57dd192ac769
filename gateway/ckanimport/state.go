package ckanimport

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// State is what an import remembers between runs, in a small JSON file:
// the source's metadata_modified up to which every dataset was copied (the
// high-water mark), and the ids copied at exactly that instant (so that the
// next run, which starts at the mark inclusive, skips them).
type State struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Org     string    `json:"org,omitempty"`
	Mark    string    `json:"mark,omitempty"`
	AtMark  []string  `json:"at_mark,omitempty"`
	Updated time.Time `json:"updated"`
	// Complete is false while a run is under way (true after a run that
	// reached the end), so a resumed run can say so.
	Complete bool `json:"complete"`
}

// DefaultStatePath is where the state of an import from one site into
// another is kept unless --state says otherwise: the user's state directory
// ($XDG_STATE_HOME, else ~/.local/state)/toxgate/import-<hash>.json.
func DefaultStatePath(from, to, org string) (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the import state (pass --state): %w", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(from + "\x00" + to + "\x00" + org))
	return filepath.Join(dir, "toxgate", "import-"+hex.EncodeToString(sum[:8])+".json"), nil
}

// loadState reads the state file; a missing file is an empty state.
func loadState(path string) (State, error) {
	var s State
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read import state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("import state %s is not valid JSON (remove it to import everything again): %w", path, err)
	}
	return s, nil
}

// save writes the state atomically (a temporary file renamed over it), so
// an interruption leaves the old state or the new one.
func (s *State) save(path string) error {
	s.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("import state directory: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write import state: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write import state: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write import state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write import state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write import state: %w", err)
	}
	return nil
}
