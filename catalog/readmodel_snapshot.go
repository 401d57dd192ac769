package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
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
	Doc     int       `json:"doc"`
	Seq     int64     `json:"seq"`
	Context uint64    `json:"context"`
	Revs    []snapRev `json:"revs"`
}

// snapRev is one dataset's revision in a snapshot: its id, rev and
// metadata_modified (Unix nanoseconds; a dataset purged and made again
// with its id starts again at rev 1).
type snapRev struct {
	ID  string `json:"i"`
	Rev int64  `json:"r"`
	Mod int64  `json:"m"`
}

// contextPrint is a fingerprint of what docFor reads besides the dataset:
// the organizations, groups and vocabularies (ids, revisions, names,
// titles, states). Callers hold a lock.
func (st *readModel) contextPrint() uint64 {
	var rows []string
	for _, o := range st.orgs {
		rows = append(rows, "o\x00"+o.ID+"\x00"+strconv.FormatInt(o.Rev, 10)+"\x00"+o.Name+"\x00"+o.Title+"\x00"+o.State)
	}
	for _, g := range st.groups {
		rows = append(rows, "g\x00"+g.ID+"\x00"+strconv.FormatInt(g.Rev, 10)+"\x00"+g.Name+"\x00"+g.Title+"\x00"+g.State)
	}
	for _, v := range st.vocabs {
		rows = append(rows, "v\x00"+v.ID+"\x00"+strconv.FormatInt(v.Rev, 10)+"\x00"+v.Name)
	}
	slices.Sort(rows)
	h := fnv.New64a()
	for _, r := range rows {
		_, _ = h.Write([]byte(r))
		_, _ = h.Write([]byte{0xff})
	}
	return h.Sum64()
}

// restoreIndex gives fresh (its records loaded, not yet indexed) the
// index of the snapshot at path when it is usable: of this docVersion,
// not ahead of seq (the marker read before loading), built with the same
// organizations, groups and vocabularies. Documents of datasets changed,
// made or purged since are indexed again. It reports how many documents
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
	case m.Context != st.contextPrint():
		return 0, errors.New("index snapshot made with other organizations, groups or vocabularies")
	}
	revs := make(map[string]snapRev, len(m.Revs))
	for _, r := range m.Revs {
		revs[r.ID] = r
	}
	var stale []string
	ix, _, err := search.ReadSnapshot(data, func(id string) (any, bool) {
		d := st.datasets[id]
		r, ok := revs[id]
		if d == nil || !ok || r.Rev != d.Rev || r.Mod != d.MetadataModified.UnixNano() {
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
// lock while it encodes the index in memory, so writes of the catalog (and
// the reads behind them) wait that long; the file is written after.
func (st *readModel) writeSnapshot(path string) error {
	var buf bytes.Buffer
	err := func() error {
		st.mu.RLock()
		defer st.mu.RUnlock()
		m := snapshotMeta{Doc: docVersion, Seq: st.applied, Context: st.contextPrint(), Revs: make([]snapRev, 0, len(st.datasets))}
		for id, d := range st.datasets {
			m.Revs = append(m.Revs, snapRev{ID: id, Rev: d.Rev, Mod: d.MetadataModified.UnixNano()})
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return err
		}
		return st.index.WriteSnapshot(&buf, raw)
	}()
	if err != nil {
		return fmt.Errorf("index snapshot: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("index snapshot: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("index snapshot: %w", err)
	}
	return nil
}
