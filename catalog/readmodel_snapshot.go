package catalog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"

	"toxgate/catalog/search"
)

// docVersion numbers what docFor puts in a search document; a snapshot
// made by another version is not used. Raise it with any change to docFor
// or to what it reads.
const docVersion = 1

// snapshotMeta is what an index snapshot reflects: the change marker it
// was current to, the organizations, groups and vocabularies its
// documents were built with (as one fingerprint), and each dataset's
// revision.
type snapshotMeta struct {
	Doc     int               `json:"doc"`
	Seq     int64             `json:"seq"`
	Context map[string]uint64 `json:"context"`
	Revs    []snapRev         `json:"revs"`
}

// snapRev is one dataset's revision in a snapshot: its id, rev and
// metadata_modified (Unix nanoseconds; a dataset purged and made again
// with its id starts again at rev 1).
type snapRev struct {
	ID  string `json:"i"`
	Rev int64  `json:"r"`
	Mod int64  `json:"m"`
}

// contextPrints fingerprints what docFor reads besides the dataset: each
// organization, group and vocabulary (revision, name, title, state), by
// id. Callers hold a lock.
func (st *readModel) contextPrints() map[string]uint64 {
	out := make(map[string]uint64, len(st.orgs)+len(st.groups)+len(st.vocabs))
	fp := func(parts ...string) uint64 {
		h := fnv.New64a()
		for _, p := range parts {
			_, _ = h.Write([]byte(p))
			_, _ = h.Write([]byte{0xff})
		}
		return h.Sum64()
	}
	for _, o := range st.orgs {
		out[o.ID] = fp("o", strconv.FormatInt(o.Rev, 10), o.Name, o.Title, o.State)
	}
	for _, g := range st.groups {
		out[g.ID] = fp("g", strconv.FormatInt(g.Rev, 10), g.Name, g.Title, g.State)
	}
	for _, v := range st.vocabs {
		out[v.ID] = fp("v", strconv.FormatInt(v.Rev, 10), v.Name)
	}
	return out
}

// sameContext reports whether d's document reads the same organization,
// groups and vocabularies in now as in then (prints by id; absent in both
// is the same).
func sameContext(d *Dataset, then, now map[string]uint64) bool {
	same := func(id string) bool { return then[id] == now[id] }
	if !same(d.OwnerOrg) {
		return false
	}
	for _, g := range d.Groups {
		if !same(g) {
			return false
		}
	}
	for _, t := range d.VocabTags {
		if !same(t.VocabularyID) {
			return false
		}
	}
	return true
}

// restoreIndex gives fresh (its records loaded, not yet indexed) the
// index of the snapshot at path when it is usable: of this docVersion and
// not ahead of seq (the marker read before loading). Documents of datasets
// changed, made or purged since, or whose organization, groups or
// vocabularies changed, are indexed again. It reports how many documents
// it indexed again; an unusable snapshot gives an error and leaves fresh
// as it was. Callers own fresh.
func (st *readModel) restoreIndex(path string, seq int64) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read index snapshot: %w", err)
	}
	raw, err := search.SnapshotMeta(data)
	if err != nil {
		return 0, err
	}
	var m snapshotMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, fmt.Errorf("index snapshot meta: %w", err)
	}
	switch {
	case m.Doc != docVersion:
		return 0, fmt.Errorf("index snapshot of document version %d, want %d", m.Doc, docVersion)
	case m.Seq > seq:
		return 0, fmt.Errorf("index snapshot at marker %d, ahead of the store's %d", m.Seq, seq)
	}
	now := st.contextPrints()
	revs := make(map[string]snapRev, len(m.Revs))
	for _, r := range m.Revs {
		revs[r.ID] = r
	}
	var stale []string
	ix, _, err := search.ReadSnapshot(data, func(id string) (any, bool) {
		d := st.datasets[id]
		r, ok := revs[id]
		if d == nil || !ok || r.Rev != d.Rev || r.Mod != d.MetadataModified.UnixNano() || !sameContext(d, m.Context, now) {
			stale = append(stale, id)
			return nil, true // deleted below, before anything searches
		}
		return d, true
	})
	if err != nil {
		return 0, err
	}
	for _, id := range stale {
		ix.Delete(id)
	}
	n := 0
	for id, d := range st.datasets {
		if ix.Get(id) == nil {
			ix.Put(st.docFor(d))
			n++
		}
	}
	st.index = ix
	return n, nil
}

// indexAll indexes every dataset of fresh. Callers own fresh.
func (st *readModel) indexAll() {
	for _, d := range st.datasets {
		st.index.Put(st.docFor(d))
	}
}

// writeSnapshot writes the index with what it reflects to path (through
// a file beside it, renamed into place once synced). It holds the read
// lock while it encodes the index into the file through a 1 MiB buffer
// (writes of the catalog, and the reads behind them, wait that long; the
// bytes go to the page cache, so that is about the encoding's time), and
// syncs the file after: the snapshot is never whole in memory.
func (st *readModel) writeSnapshot(path string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("index snapshot: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
			err = fmt.Errorf("index snapshot: %w", err)
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = func() error {
		st.mu.RLock()
		defer st.mu.RUnlock()
		m := snapshotMeta{Doc: docVersion, Seq: st.applied, Context: st.contextPrints(), Revs: make([]snapRev, 0, len(st.datasets))}
		for id, d := range st.datasets {
			m.Revs = append(m.Revs, snapRev{ID: id, Rev: d.Rev, Mod: d.MetadataModified.UnixNano()})
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return st.index.WriteSnapshot(w, raw)
	}()
	if err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
