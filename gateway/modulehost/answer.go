package modulehost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"toxgate/gateway/modulehost/modelapi"
	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/sdk/abi"
)

// Key kinds of the response cache: a whole answer, one item of a batch
// route's list, and the rest of a batch answer (its members beside the list).
const (
	kindCall      = "call"
	kindBatchItem = "batch-item"
	kindBatchHead = "batch-head"
)

// answer runs a validated body on route r, from the response cache where
// it can: hit is true when no part of the answer was computed.
func (h *Host) answer(ctx context.Context, r route, caller Caller, rt *abi.Route, body []byte) (out []byte, hit bool, err error) {
	if h.rcache == nil {
		out, err = h.compute(ctx, r, caller, rt, body)
		return out, false, err
	}
	if rt.Batch != nil {
		if b := splitBatch(rt.Batch, body); b != nil {
			return h.cachedBatch(ctx, r, caller, rt, b)
		}
	}
	canon, ok := canonicalJSON(body)
	if !ok {
		out, err = h.compute(ctx, r, caller, rt, body)
		return out, false, err
	}
	name, sha := rt.Path, r.e.mod.SHA256()
	k := newKeyer(sha, name, kindCall).part(canon).sum()
	if a, ok := h.rcache.get(k); ok {
		h.metrics.cacheHits.WithLabelValues(r.e.mod.Manifest().Name).Inc()
		return a, true, nil
	}
	h.metrics.cacheMisses.WithLabelValues(r.e.mod.Manifest().Name).Inc()
	out, err = h.compute(ctx, r, caller, rt, body)
	if err == nil && h.current(r) {
		h.rcache.add(k, sha, out)
	}
	return out, false, err
}

// compute runs body on route r: a large list of a batch route in pieces.
func (h *Host) compute(ctx context.Context, r route, caller Caller, rt *abi.Route, body []byte) ([]byte, error) {
	if b := h.parseBatch(rt.Batch, body); b != nil {
		return h.callBatch(ctx, r, caller, rt.Batch, b)
	}
	return h.call(ctx, r, caller, body)
}

// current reports whether r's module still serves (an answer of a module
// replaced meanwhile is not kept: nothing could reach it).
func (h *Host) current(r route) bool {
	e, ok := h.reg.Load().modules[r.e.mod.Manifest().Name]
	return ok && e == r.e
}

// cacheBatch is a request to a batch route, keyed item by item.
type cacheBatch struct {
	body  []byte            // the request as sent
	ms    []modelapi.Member // the request's top-level members
	at    int               // the index of the list member in ms
	items []json.RawMessage
	rest  []byte   // canonical text of the other members
	canon [][]byte // canonical text of each item
}

// splitBatch reads a request to a batch route for the cache; nil when the
// list member is not a non-empty list or a part cannot be keyed.
func splitBatch(bt *abi.Batch, body []byte) *cacheBatch {
	ms, err := modelapi.ObjectMembers(body)
	if err != nil {
		return nil
	}
	at := -1
	for i, m := range ms {
		if m.Key == bt.Input {
			if at >= 0 {
				return nil // a duplicate key: which one the module reads is its business
			}
			at = i
		}
	}
	if at < 0 || !bytes.HasPrefix(bytes.TrimSpace(ms[at].Val), []byte("[")) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(ms[at].Val, &items); err != nil || len(items) == 0 {
		return nil
	}
	others := make([]modelapi.Member, 0, len(ms)-1)
	others = append(others, ms[:at]...)
	others = append(others, ms[at+1:]...)
	rest, ok := canonicalJSON(encodeMembers(others))
	if !ok {
		return nil
	}
	b := &cacheBatch{body: body, ms: ms, at: at, items: items, rest: rest, canon: make([][]byte, len(items))}
	for i, it := range items {
		if b.canon[i], ok = canonicalJSON(it); !ok {
			return nil
		}
	}
	return b
}

// cachedBatch answers a batch request item by item: an item kept in the
// cache is not computed, nor is a duplicate of an item of the same list;
// the module computes the other items, each once, in one request (cut in
// pieces as any other), and the answer is joined in the list's order.
// Row errors are kept for position 0 and renumbered for where they appear.
func (h *Host) cachedBatch(ctx context.Context, r route, caller Caller, rt *abi.Route, b *cacheBatch) ([]byte, bool, error) {
	bt, sha, name := rt.Batch, r.e.mod.SHA256(), r.e.mod.Manifest().Name
	n := len(b.items)
	headKey := newKeyer(sha, rt.Path, kindBatchHead).part(b.rest).sum()
	head, headOK := h.rcache.get(headKey)
	keys := make([]cacheKey, n)
	rows := make([]json.RawMessage, n) // kept rows, for position 0
	slot := make([]int, n)             // index in missing of the item computed for i; -1 when kept
	first := make(map[cacheKey]int, n)
	var missing []int // the item computed for each distinct key not kept
	for i := range b.items {
		keys[i] = newKeyer(sha, rt.Path, kindBatchItem).part(b.rest).part(b.canon[i]).sum()
		if j, dup := first[keys[i]]; dup {
			slot[i] = j
			continue
		}
		// Without the rest of the answer kept, the first item is computed
		// again to give it.
		if a, ok := h.rcache.get(keys[i]); ok && (headOK || i > 0) {
			rows[i], slot[i] = a, -1
			continue
		}
		first[keys[i]] = len(missing)
		slot[i] = len(missing)
		missing = append(missing, i)
	}
	h.metrics.cacheHits.WithLabelValues(name).Add(float64(n - len(missing)))
	h.metrics.cacheMisses.WithLabelValues(name).Add(float64(len(missing)))
	if len(missing) == n {
		// Every item is new and distinct: the request as sent.
		out, err := h.compute(ctx, r, caller, rt, b.body)
		if err == nil {
			h.keepBatch(r, bt, b, keys, missing, out, headKey)
		}
		return out, false, err
	}
	var computed []json.RawMessage
	if len(missing) > 0 {
		part := make([]modelapi.Member, len(b.ms))
		copy(part, b.ms)
		sub := make([]json.RawMessage, len(missing))
		for j, i := range missing {
			sub[j] = b.items[i]
		}
		part[b.at].Val = joinArray(sub)
		out, err := h.compute(ctx, r, caller, rt, encodeMembers(part))
		if err != nil {
			var ge *abi.Error
			if errors.As(err, &ge) {
				ge.Field = remapField(ge.Field, bt.Input, missing)
			}
			return nil, false, err
		}
		var ok bool
		if head, computed, ok = batchRows(out, bt.Output); !ok || len(computed) != len(missing) {
			return nil, false, &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch output member %s does not hold one row per item", bt.Output)}
		}
		for j := range computed {
			computed[j] = renumberRowError(computed[j], bt.Input, -j)
		}
		h.keepBatch(r, bt, b, keys, missing, out, headKey)
	}
	hms, err := modelapi.ObjectMembers(head)
	if err != nil {
		return nil, false, &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch output: %w", err)}
	}
	joined := make([]json.RawMessage, n)
	for i := range joined {
		row := rows[i]
		if slot[i] >= 0 {
			row = computed[slot[i]]
		}
		joined[i] = renumberRowError(row, bt.Input, i)
	}
	for i := range hms {
		if hms[i].Key == bt.Output {
			hms[i].Val = joinArray(joined)
		}
	}
	return encodeMembers(hms), len(missing) == 0, nil
}

// keepBatch keeps the rows of out, the answer for the items missing (in
// that order), each for position 0, and the rest of the answer.
func (h *Host) keepBatch(r route, bt *abi.Batch, b *cacheBatch, keys []cacheKey, missing []int, out []byte, headKey cacheKey) {
	if !h.current(r) {
		return
	}
	head, rows, ok := batchRows(out, bt.Output)
	if !ok || len(rows) != len(missing) {
		return
	}
	sha := r.e.mod.SHA256()
	h.rcache.add(headKey, sha, head)
	for j, i := range missing {
		h.rcache.add(keys[i], sha, bytes.Clone(renumberRowError(rows[j], bt.Input, -j)))
	}
}

// batchRows splits a batch answer into its rows and the rest (the answer
// with an empty list in place of the rows).
func batchRows(out []byte, output string) (head []byte, rows []json.RawMessage, ok bool) {
	ms, err := modelapi.ObjectMembers(out)
	if err != nil {
		return nil, nil, false
	}
	found := false
	for i, m := range ms {
		if m.Key != output {
			continue
		}
		if found || json.Unmarshal(m.Val, &rows) != nil {
			return nil, nil, false
		}
		ms[i].Val = json.RawMessage("[]")
		found = true
	}
	if !found {
		return nil, nil, false
	}
	return encodeMembers(ms), rows, true
}

// remapField turns the field input[j]... of a request made of the items
// at (input[j] is the request's item at[j]) into input[at[j]]...
func remapField(field, input string, at []int) string {
	rest, ok := strings.CutPrefix(field, input+"[")
	if !ok {
		return field
	}
	num, tail, ok := strings.Cut(rest, "]")
	j, err := strconv.Atoi(num)
	if !ok || err != nil || j < 0 || j >= len(at) {
		return field
	}
	return input + "[" + strconv.Itoa(at[j]) + "]" + tail
}
