package catalog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"toxgate/catalog/chemindex"
	"toxgate/catalog/datastore"
)

// ChemOptions configure the compound resolver and the structure index.
type ChemOptions struct {
	// IndexMaxRows bounds the rows the structure index holds over every
	// table (datastore.structure_index_max_rows); 0 turns the index off.
	IndexMaxRows int
	// Warm loads the compound tables at start, in the background (the
	// plugin sets it); otherwise they are loaded by the first call that
	// needs them.
	Warm bool
}

// chemState is the catalog's chemistry: the compound resolver (the
// embedded compound tables and the registered dictionaries) and the
// structure index of every DataStore table with a SMILES column, kept up
// to date in the background after each DataStore write.
type chemState struct {
	s        *Service
	maxRows  int
	idx      *chemindex.Index
	resolver atomic.Pointer[chemindex.Resolver]
	loadOnce sync.Once
	loadErr  error

	mu        sync.Mutex
	dirty     map[string]bool
	requested uint64        // marks made
	done      uint64        // marks processed
	doneCh    chan struct{} // closed (and replaced) when done advances
	wake      chan struct{}
}

// scanPage is how many rows the indexer reads at a time.
const scanPage = 5000

// maxDictionaryRows bounds the rows read from one compound dictionary.
const maxDictionaryRows = 500000

// newChemState starts the resolver's load and, with a DataStore, the
// indexer over every table.
func (s *Service) startChem() {
	c := &chemState{s: s, maxRows: s.opts.Chem.IndexMaxRows, idx: chemindex.NewIndex(),
		dirty: map[string]bool{}, doneCh: make(chan struct{}), wake: make(chan struct{}, 1)}
	s.chem = c
	if s.opts.Chem.Warm {
		go func() { _, _ = c.load() }()
	}
	if s.ds != nil {
		go c.run()
	}
}

// load returns the resolver, loading the compound tables on the first
// call (later calls wait for that one).
func (c *chemState) load() (*chemindex.Resolver, error) {
	c.loadOnce.Do(func() {
		r, err := chemindex.NewResolver()
		if err != nil {
			c.s.log.Error("chem: load the compound tables", "err", err)
			c.loadErr = err
			return
		}
		c.resolver.Store(r)
	})
	return c.resolver.Load(), c.loadErr
}

// mark queues resource id's table for (re)indexing.
func (c *chemState) mark(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.dirty[id] = true
	c.requested++
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// fresh waits until every mark made before the call is processed (the
// index then holds every write that returned before it), or ctx ends.
func (c *chemState) fresh(ctx context.Context) bool {
	c.mu.Lock()
	target := c.requested
	for c.done < target {
		ch := c.doneCh
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
		c.mu.Lock()
	}
	c.mu.Unlock()
	return true
}

// run marks every table and then indexes marked tables until the process
// ends.
func (c *chemState) run() {
	ctx := context.Background()
	ids, err := c.s.ds.TableIDs(ctx)
	if err != nil {
		c.s.log.Error("chem: list DataStore tables", "err", err)
	}
	for _, id := range ids {
		c.mark(id)
	}
	for range c.wake {
		c.mu.Lock()
		batch, seq := c.dirty, c.requested
		c.dirty = map[string]bool{}
		c.mu.Unlock()
		dicts := map[string]bool{}
		if l, err := c.s.ds.Dictionaries(ctx); err != nil {
			c.s.log.Error("chem: list compound dictionaries", "err", err)
		} else {
			for _, id := range l {
				dicts[id] = true
			}
		}
		for id := range batch {
			if err := c.reindex(ctx, id, dicts[id]); err != nil {
				c.s.log.Error("chem: index table", "resource_id", id, "err", err)
			}
		}
		c.mu.Lock()
		c.done = seq
		close(c.doneCh)
		c.doneCh = make(chan struct{})
		c.mu.Unlock()
	}
}

// reindex rebuilds the index entries of resource id's table, and its
// dictionary when it is one.
func (c *chemState) reindex(ctx context.Context, id string, dict bool) error {
	ds := c.s.ds
	fields, err := ds.Fields(ctx, id)
	if err != nil {
		return err
	}
	src := "datastore:" + id
	// the resolver holds dictionaries: loaded for one, else only if loaded
	r := c.resolver.Load()
	if dict && fields != nil {
		if r, err = c.load(); err != nil {
			return err
		}
	}
	if fields == nil {
		c.idx.DropTable(id)
		if r != nil {
			r.RemoveDictionary(src)
		}
		return nil
	}
	if dict {
		if err := c.loadDictionary(ctx, r, id, fields); err != nil {
			return err
		}
	} else if r != nil {
		r.RemoveDictionary(src)
	}
	if c.maxRows <= 0 {
		return nil
	}
	col, err := c.smilesColumn(ctx, id, fields)
	if err != nil {
		return err
	}
	if col == "" {
		c.idx.DropTable(id)
		return nil
	}
	// rows of the other tables, and so the room this one has
	room := c.maxRows - c.idx.Rows()
	for _, t := range c.idx.Tables() {
		if t.Resource == id {
			room += t.Rows
		}
	}
	var rows []chemindex.Row
	after := int64(0)
	for {
		ids, vals, err := ds.ScanText(ctx, id, []string{col}, after, scanPage)
		if err != nil {
			return err
		}
		for i := range ids {
			if v := strings.TrimSpace(vals[i][0]); v != "" && len(v) <= chemindex.MaxQueryLength {
				rows = append(rows, chemindex.Row{ID: ids[i], SMILES: v})
			}
		}
		if len(rows) > room {
			c.s.log.Warn("chem: structure index full; table indexed in part (datastore.structure_index_max_rows)",
				"resource_id", id, "indexed_rows", room)
			rows = rows[:max(room, 0)]
			break
		}
		if len(ids) < scanPage {
			break
		}
		after = ids[len(ids)-1]
	}
	prepared, bad := chemindex.Prepare(rows)
	c.idx.SetTable(id, col, prepared, bad)
	return nil
}

// loadDictionary reads a registered dictionary table into the resolver.
func (c *chemState) loadDictionary(ctx context.Context, r *chemindex.Resolver, id string, fields []datastore.Field) error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.ID
	}
	cols := chemindex.DictionaryColumnMap(names)
	var want []string
	for _, v := range cols {
		want = append(want, v)
	}
	src := "datastore:" + id
	if len(want) == 0 {
		r.RemoveDictionary(src)
		return nil
	}
	var out []*chemindex.Compound
	after, n := int64(0), 0
	for n < maxDictionaryRows {
		ids, vals, err := c.s.ds.ScanText(ctx, id, want, after, scanPage)
		if err != nil {
			return err
		}
		for i := range ids {
			row := make(map[string]string, len(want))
			for j, w := range want {
				row[w] = vals[i][j]
			}
			if comp := chemindex.DictionaryCompound(row, cols, src); comp != nil {
				out = append(out, comp)
			}
		}
		n += len(ids)
		if len(ids) < scanPage {
			break
		}
		after = ids[len(ids)-1]
	}
	title := "DataStore table " + id
	c.s.st.view(func() {
		if d, i := c.s.st.findResource(id); d != nil {
			title = fmt.Sprintf("DataStore table of resource %s in dataset %s", id, d.Name)
			if nm := d.Resources[i].Name; nm != nil && *nm != "" {
				title = fmt.Sprintf("DataStore table of resource %q (%s) in dataset %s", *nm, id, d.Name)
			}
		}
	})
	r.SetDictionary(chemindex.Source{ID: src, Title: title}, out)
	return nil
}

// smilesColumn picks the table's SMILES column: one declared in the data
// dictionary (a field whose info has "structure": "smiles"), else the
// first field whose name holds "smiles", else the first text field whose
// sampled values read as SMILES. A field with "structure": "none" is
// never taken.
func (c *chemState) smilesColumn(ctx context.Context, id string, fields []datastore.Field) (string, error) {
	var text []string
	for _, f := range fields {
		v, _ := f.Info["structure"].(string)
		if strings.EqualFold(v, "smiles") {
			return f.ID, nil
		}
	}
	for _, f := range fields {
		v, _ := f.Info["structure"].(string)
		if strings.EqualFold(v, "none") {
			continue
		}
		if strings.Contains(strings.ToLower(f.ID), "smiles") {
			return f.ID, nil
		}
		if f.Type == "text" {
			text = append(text, f.ID)
		}
	}
	if len(text) == 0 {
		return "", nil
	}
	if len(text) > 20 {
		text = text[:20]
	}
	_, vals, err := c.s.ds.ScanText(ctx, id, text, 0, 20)
	if err != nil {
		return "", err
	}
	for j, col := range text {
		sample := make([]string, 0, len(vals))
		for _, row := range vals {
			sample = append(sample, row[j])
		}
		if chemindex.LooksLikeSMILES(sample) {
			return col, nil
		}
	}
	return "", nil
}
