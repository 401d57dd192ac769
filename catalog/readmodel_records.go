package catalog

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The records file keeps the catalog's datasets beside the index snapshot,
// so that a starting plugin reads them from a local file instead of the
// store (see README.md, "Start-up from the records file"). It is a base
// (every dataset, as of a change marker number) followed by a journal of
// every change the process applied since, in the order applied, with
// marks of the marker number the file is current to:
//
//	magic
//	frame 'h' {header JSON}
//	frame 'p' <dataset BSON>   ... the base: every dataset
//	frame 'b' {count JSON}     the base is whole
//	frame 'p' <dataset BSON> | 'd' <id> | 'm' <seq, at>   ... the journal
//
// A frame is its payload's length and CRC-32C (little-endian uint32 each)
// and the payload, whose first byte is its kind. Reading stops at the first
// frame that is short, too long or fails its checksum: a process killed
// while appending leaves a torn last frame, and the file is current to its
// last whole mark.
const recordsMagic = "toxgate catalog records v1\n"

// recordsVersion numbers the file's layout and the dataset record's BSON;
// a file of another version is not used.
const recordsVersion = 1

// Frame kinds of the records file.
const (
	frameHeader  = 'h'
	framePut     = 'p'
	frameDel     = 'd'
	frameBaseEnd = 'b'
	frameMark    = 'm'
)

// maxRecordFrame bounds one frame read back (a stored record is at most
// 16 MiB, MongoDB's document limit).
const maxRecordFrame = 17 << 20

// recordsCompactMin is the journal size under which a records file is
// never rewritten; above it, it is rewritten once its journal outgrows
// its base.
const recordsCompactMin = 64 << 20

// recordsFlushEvery is how often the journal goes to the file.
const recordsFlushEvery = 200 * time.Millisecond

// RecordsFileBeside is the records file kept beside the index snapshot
// at indexPath ("" when there is none): the catalog plugin keeps one
// wherever it keeps an index snapshot (Options.RecordsFile).
func RecordsFileBeside(indexPath string) string {
	if indexPath == "" {
		return ""
	}
	return indexPath + ".records"
}

// recordsHeader is what a records file's base reflects: the store it was
// read from (its identity, see recordStore.storeID) and the change marker
// number, with the time of the marker read that made it current.
type recordsHeader struct {
	Version int    `json:"version"`
	Store   string `json:"store"`
	Seq     int64  `json:"seq"`
	At      int64  `json:"at"`
	// Datasets is how many datasets the base holds at most (the maps
	// of a reader are sized by it).
	Datasets int `json:"datasets"`
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends one frame of kind with body to buf.
func appendFrame(buf []byte, kind byte, body []byte) []byte {
	n := len(body) + 1
	var head [8]byte
	binary.LittleEndian.PutUint32(head[0:4], uint32(n))
	crc := crc32.Update(crc32.Update(0, crcTable, []byte{kind}), crcTable, body)
	binary.LittleEndian.PutUint32(head[4:8], crc)
	buf = append(buf, head[:]...)
	buf = append(buf, kind)
	return append(buf, body...)
}

// appendMark appends a mark frame: the file is current to seq, made
// current by a marker read that started at at.
func appendMark(buf []byte, seq int64, at time.Time) []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:8], uint64(seq))
	binary.LittleEndian.PutUint64(b[8:16], uint64(at.UnixNano()))
	return appendFrame(buf, frameMark, b[:])
}

// errTorn ends the frames of a records file: what follows is not whole.
var errTorn = errors.New("torn frame")

// readFrame reads the next frame into buf (grown as needed); io.EOF at a
// clean end, errTorn for a short, oversized or damaged frame.
func readFrame(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, buf, io.EOF
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, buf, errTorn
		}
		return 0, buf, err
	}
	n := binary.LittleEndian.Uint32(head[0:4])
	if n == 0 || n > maxRecordFrame {
		return 0, buf, errTorn
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, buf, errTorn
		}
		return 0, buf, err
	}
	if crc32.Checksum(buf, crcTable) != binary.LittleEndian.Uint32(head[4:8]) {
		return 0, buf, errTorn
	}
	return buf[0], buf, nil
}

// recordJournal collects the changes a process applies to its read model
// after its records file's base was taken, as frames waiting to be
// appended to the file. Its methods are called with the read model's
// write lock held (put, del, detach) or its read lock (take).
type recordJournal struct {
	mu      sync.Mutex
	pending []byte
	// broken is set when a change could not be journaled or the read
	// model was replaced: the file's later marks would be false, so none
	// is written any more.
	broken bool
}

func (j *recordJournal) put(d *Dataset) {
	raw, err := bson.Marshal(d)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		j.broken = true
		return
	}
	j.pending = appendFrame(j.pending, framePut, raw)
}

func (j *recordJournal) del(id string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pending = appendFrame(j.pending, frameDel, []byte(id))
}

// detach marks the journal broken (the read model it followed was
// replaced).
func (j *recordJournal) detach() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.broken = true
}

// take hands over the pending frames.
func (j *recordJournal) take() ([]byte, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.pending
	j.pending = nil
	return out, j.broken
}

// recordsFile is a records file this process writes: its base is
// written, and its journal is appended by flush.
type recordsFile struct {
	f        *os.File
	path     string
	j        *recordJournal
	info     os.FileInfo
	base     int64
	journal  int64
	markSeq  int64
	datasets int
}

// baseChunk is how many datasets the base encodes per hold of the read
// lock: writes wait at most that long for the base.
const baseChunk = 512

// startRecords writes a new records file at path for the store named
// store: it attaches a new journal to the read model (from this moment
// every change is journaled), writes every dataset (a chunk at a time,
// under the read lock), syncs the file and renames it into place. The
// datasets are encoded after the journal starts, so a dataset changed
// meanwhile may be in the base at a later revision; reading the journal
// after the base brings each to its last state either way.
func (st *readModel) startRecords(path, store string) (rf *recordsFile, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("records file: %w", err)
	}
	j := &recordJournal{}
	defer func() {
		if err != nil {
			st.mu.Lock()
			if st.journal == j {
				st.journal = nil
			}
			st.mu.Unlock()
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
			err = fmt.Errorf("records file: %w", err)
		}
	}()
	st.mu.Lock()
	if st.journal != nil {
		st.journal.detach()
	}
	st.journal = j
	ids := make([]string, 0, len(st.datasets))
	for id := range st.datasets {
		ids = append(ids, id)
	}
	h := recordsHeader{Version: recordsVersion, Store: store, Seq: st.applied, At: st.appliedAt.UnixNano(), Datasets: len(ids)}
	st.mu.Unlock()

	w := bufio.NewWriterSize(tmp, 1<<20)
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.WriteString(recordsMagic); err != nil {
		return nil, err
	}
	if _, err := w.Write(appendFrame(nil, frameHeader, hb)); err != nil {
		return nil, err
	}
	var buf []byte
	n := 0
	for start := 0; start < len(ids); start += baseChunk {
		buf = buf[:0]
		st.mu.RLock()
		for _, id := range ids[start:min(start+baseChunk, len(ids))] {
			d := st.datasets[id]
			if d == nil {
				continue
			}
			raw, merr := bson.Marshal(d)
			if merr != nil {
				st.mu.RUnlock()
				return nil, fmt.Errorf("encode dataset %s: %w", id, merr)
			}
			buf = appendFrame(buf, framePut, raw)
			n++
		}
		st.mu.RUnlock()
		if _, err := w.Write(buf); err != nil {
			return nil, err
		}
	}
	cb, _ := json.Marshal(map[string]int{"datasets": n})
	if _, err := w.Write(appendFrame(nil, frameBaseEnd, cb)); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	info, err := tmp.Stat()
	if err != nil {
		return nil, err
	}
	return &recordsFile{f: tmp, path: path, j: j, info: info, base: info.Size(), markSeq: h.Seq, datasets: n}, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}

// flush appends the journal's pending changes and a mark of the marker
// number the read model is current to. The frames and the number are
// taken under the read lock, so the mark never claims a change that is
// not before it in the file. A broken journal writes nothing more (the
// file stays current to its last mark) and reports errJournalBroken.
func (rf *recordsFile) flush(st *readModel) error {
	st.mu.RLock()
	buf, broken := rf.j.take()
	seq, at := st.applied, st.appliedAt
	st.mu.RUnlock()
	if broken {
		return errJournalBroken
	}
	if len(buf) == 0 && seq == rf.markSeq {
		return nil
	}
	buf = appendMark(buf, seq, at)
	if _, err := rf.f.Write(buf); err != nil {
		// a short write leaves a torn frame, which a reader stops at
		rf.j.detach()
		return fmt.Errorf("records file: %w", err)
	}
	rf.journal += int64(len(buf))
	rf.markSeq = seq
	return nil
}

// errJournalBroken reports a records file whose journal stopped.
var errJournalBroken = errors.New("records journal stopped")

// needsRewrite reports whether the journal outgrew the base.
func (rf *recordsFile) needsRewrite() bool {
	return rf.journal > max(recordsCompactMin, rf.base)
}

// stillOurs reports whether the file at the path is still the one this
// process wrote (a newer process, after a hot reload, writes its own).
func (rf *recordsFile) stillOurs() bool {
	info, err := os.Stat(rf.path)
	return err == nil && os.SameFile(info, rf.info)
}

// close flushes nothing; it ends the file's journal and closes it.
func (rf *recordsFile) close(st *readModel) {
	st.mu.Lock()
	if st.journal == rf.j {
		st.journal = nil
	}
	st.mu.Unlock()
	rf.j.detach()
	_ = rf.f.Close()
}

// recordsRead is what restoreRecords read: the marker number the records
// are current to, with the time of the marker read that made them so.
type recordsRead struct {
	seq      int64
	at       time.Time
	datasets int
	frames   int
}

// frameBatch is a run of frames read in order; the puts are decoded by
// the workers, and the batch is applied in order once decoded.
type frameBatch struct {
	kinds  []byte
	bodies [][]byte
	bytes  int
	ds     []*Dataset
	err    error
	done   chan struct{}
}

// minRecordFrame is less than any dataset's frame takes in a records
// file (its id, name and dates alone take more): the most datasets a file
// can hold is its size over this.
const minRecordFrame = 64

// readBatch and readBatchBytes bound one decoding batch: so many frames
// or so many bytes, whichever comes first (the batches in flight, about
// 20, bound what a read holds besides the records).
const (
	readBatch      = 256
	readBatchBytes = 4 << 20
)

// restoreRecords fills fresh (a read model being loaded, its datasets
// empty) from the records file at path when it is usable: of this version
// and read from the store named store. The caller checks the marker
// number it reports against the store's (a file ahead of the store is of
// a store restored from an older backup). The datasets are decoded by
// workers goroutines (at least one) and applied in the order of the file.
// An unusable file gives an error; fresh must then be thrown away.
func (st *readModel) restoreRecords(path, store string, workers int) (recordsRead, error) {
	var out recordsRead
	f, err := os.Open(path)
	if err != nil {
		return out, fmt.Errorf("records file: %w", err)
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(recordsMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != recordsMagic {
		return out, errors.New("records file: not a records file of this version")
	}
	kind, body, err := readFrame(r, nil)
	if err != nil || kind != frameHeader {
		return out, errors.New("records file: no header")
	}
	var h recordsHeader
	if err := json.Unmarshal(body[1:], &h); err != nil {
		return out, fmt.Errorf("records file header: %w", err)
	}
	switch {
	case h.Version != recordsVersion:
		return out, fmt.Errorf("records file of version %d, want %d", h.Version, recordsVersion)
	case h.Store != store:
		return out, fmt.Errorf("records file of another store (%q, this one is %q)", h.Store, store)
	}
	if info, err := f.Stat(); err == nil && len(st.datasets) == 0 && h.Datasets > 0 {
		// sized once rather than grown by doubling; a count larger than
		// the file could hold sizes them by the file
		n := int(min(int64(h.Datasets), info.Size()/minRecordFrame))
		st.datasets, st.byName, st.resources = make(map[string]*Dataset, n), make(map[string]string, n), make(map[string]string, 2*n)
	}

	work := make(chan *frameBatch, 4)
	ordered := make(chan *frameBatch, 16)
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.decode()
			}
		}()
	}
	// the reader feeds the workers and, in the file's order, the applier
	readErr := make(chan error, 1)
	go func() {
		defer close(ordered)
		defer close(work)
		cur := &frameBatch{done: make(chan struct{})}
		send := func() {
			work <- cur
			ordered <- cur
			cur = &frameBatch{done: make(chan struct{})}
		}
		for {
			kind, body, err := readFrame(r, nil)
			if err != nil {
				if len(cur.kinds) > 0 {
					send()
				}
				if errors.Is(err, io.EOF) || errors.Is(err, errTorn) {
					readErr <- nil
				} else {
					readErr <- err
				}
				return
			}
			cur.kinds = append(cur.kinds, kind)
			cur.bodies = append(cur.bodies, body[1:])
			cur.bytes += len(body)
			if len(cur.kinds) == readBatch || cur.bytes >= readBatchBytes {
				send()
			}
		}
	}()
	baseDone := false
	var applyErr error
	for b := range ordered {
		<-b.done
		if applyErr != nil {
			continue // drain
		}
		if b.err != nil {
			applyErr = b.err
			continue
		}
		for i, kind := range b.kinds {
			out.frames++
			switch kind {
			case framePut:
				st.putInterned(b.ds[i])
			case frameDel:
				st.removeDataset(string(b.bodies[i]))
			case frameBaseEnd:
				if baseDone {
					applyErr = errors.New("records file: a second end of the base")
					break
				}
				baseDone = true
				out.seq, out.at = h.Seq, time.Unix(0, h.At)
			case frameMark:
				if !baseDone || len(b.bodies[i]) != 16 {
					applyErr = errors.New("records file: a mark before the base is whole")
					break
				}
				out.seq = int64(binary.LittleEndian.Uint64(b.bodies[i][0:8]))
				out.at = time.Unix(0, int64(binary.LittleEndian.Uint64(b.bodies[i][8:16])))
			default:
				applyErr = fmt.Errorf("records file: unknown frame %q", kind)
			}
			if applyErr != nil {
				break
			}
		}
	}
	wg.Wait()
	if err := <-readErr; err != nil {
		return out, fmt.Errorf("records file: %w", err)
	}
	if applyErr != nil {
		return out, applyErr
	}
	if !baseDone {
		return out, errors.New("records file: its base is not whole")
	}
	out.datasets = len(st.datasets)
	return out, nil
}

// decode decodes the batch's dataset frames and closes done.
func (b *frameBatch) decode() {
	defer close(b.done)
	b.ds = make([]*Dataset, len(b.kinds))
	for i, kind := range b.kinds {
		if kind != framePut {
			continue
		}
		d, err := decodeDataset(b.bodies[i])
		if err != nil {
			b.err = fmt.Errorf("records file: decode dataset: %w", err)
			return
		}
		internDataset(d) // here, on the decoding cores, not in the applier
		if d.ID == "" {
			b.err = errors.New("records file: a dataset without an id")
			return
		}
		b.ds[i] = d
	}
}

// staleTemp is how long a temporary file beside a snapshot or records
// file stays untouched before it counts as left by a dead process (a
// writer in progress writes to it all the time).
const staleTemp = 10 * time.Minute

// removeStaleTemps removes the temporary files a killed process left
// beside path (path.tmp*) that nobody wrote for staleTemp.
func removeStaleTemps(path string, log interface{ Info(string, ...any) }) {
	matches, _ := filepath.Glob(path + ".tmp*")
	for _, m := range matches {
		if info, err := os.Stat(m); err == nil && time.Since(info.ModTime()) > staleTemp {
			if os.Remove(m) == nil {
				log.Info("catalog: removed a temporary file a stopped process left", "path", m)
			}
		}
	}
}
