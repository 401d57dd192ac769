package modulehost

import (
	"toxgate/gateway/modulehost/modelapi"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"toxgate/gateway/modulehost/wasmrt"
	"toxgate/sdk/abi"
)

// A request to a batch route (abi.Batch) whose list is larger than one
// slice (Config.BatchSliceItems, BatchSliceBytes) runs in pieces, one after
// the other, each waiting its caller's turn (see scheduler). A piece that
// would take the module's last free instance, or find others waiting for
// one, is one slice: another caller's call waits for one slice at most.
// With instances to spare, a piece is as large as fits in half the
// module's deadline (at the module's measured time per item): on an idle
// module the whole list is one call.

// batchReq is a request to a batch route whose list is larger than one slice.
type batchReq struct {
	body  []byte            // the request as sent
	ms    []modelapi.Member // its top-level members
	at    int               // the index of the list member in ms
	items []json.RawMessage
}

func encodeMembers(ms []modelapi.Member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func joinArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// parseBatch reads a request to a batch route; nil when the route has no
// batch member, the member is not a list, or the list fits in one slice.
func (h *Host) parseBatch(bt *abi.Batch, body []byte) *batchReq {
	if bt == nil || h.cfg.BatchSliceItems <= 0 {
		return nil
	}
	ms, err := modelapi.ObjectMembers(body)
	if err != nil {
		return nil
	}
	at := -1
	for i, m := range ms {
		if m.Key == bt.Input {
			at = i
		}
	}
	if at < 0 || !bytes.HasPrefix(bytes.TrimSpace(ms[at].Val), []byte("[")) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(ms[at].Val, &items); err != nil {
		return nil
	}
	if len(items) <= h.cfg.BatchSliceItems && len(ms[at].Val) <= h.cfg.BatchSliceBytes || len(items) < 2 {
		return nil
	}
	return &batchReq{body: body, ms: ms, at: at, items: items}
}

// sliceEnd is the end of the slice that starts at item start.
func (h *Host) sliceEnd(items []json.RawMessage, start int) int {
	end, size := start+1, len(items[start])
	for end < len(items) && end-start < h.cfg.BatchSliceItems && size+len(items[end]) <= h.cfg.BatchSliceBytes {
		size += len(items[end])
		end++
	}
	return end
}

// piece is the request for items [start, end): the request as sent when
// that is the whole list.
func (b *batchReq) piece(start, end int) []byte {
	if start == 0 && end == len(b.items) {
		return b.body
	}
	part := make([]modelapi.Member, len(b.ms))
	copy(part, b.ms)
	part[b.at].Val = joinArray(b.items[start:end])
	return encodeMembers(part)
}

// callBatch runs the request in pieces and joins their outputs; an error
// of a piece is the answer, its field renumbered for the whole request.
// With run slots and instances to spare, the pieces of one round run at
// once, one per free slot: a caller alone gets every core for its batch.
func (h *Host) callBatch(ctx context.Context, r route, caller Caller, bt *abi.Batch, b *batchReq) ([]byte, error) {
	j := batchJoin{input: bt.Input, output: bt.Output}
	n := len(b.items)
	budget := time.Duration(r.e.mod.Limits().TimeoutMS) * time.Millisecond / 2
	for start := 0; start < n; {
		t, err := h.sched.acquire(ctx, caller, r.e.pool, true)
		if err != nil {
			return nil, err
		}
		per := h.sched.perItem(r.e.pool)
		if !t.spare || per <= 0 {
			end := h.sliceEnd(b.items, start)
			out, err := h.run(ctx, r, caller, t, b.piece(start, end), end-start)
			if err := j.add(out, err, start); err != nil {
				return nil, err
			}
			start = end
			continue
		}
		// Free run slots beside this one take a piece each, none smaller
		// than a slice, none larger than fits in half the deadline.
		tickets := []*ticket{t}
		for len(tickets) < (n-start+h.cfg.BatchSliceItems-1)/h.cfg.BatchSliceItems {
			x := h.sched.tryAcquireSpare(caller, r.e.pool)
			if x == nil {
				break
			}
			tickets = append(tickets, x)
		}
		size := min((n-start+len(tickets)-1)/len(tickets), max(h.cfg.BatchSliceItems, int(budget.Seconds()/per)))
		if len(tickets) == 1 && start == 0 && size >= n {
			return h.run(ctx, r, caller, t, b.body, n)
		}
		type result struct {
			out        []byte
			err        error
			start, end int
		}
		results := make([]result, len(tickets))
		var wg sync.WaitGroup
		for i, tk := range tickets {
			ps, pe := min(n, start+i*size), min(n, start+(i+1)*size)
			results[i] = result{start: ps, end: pe}
			if ps == pe {
				h.sched.release(caller.Key, tk, 0, 0)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i].out, results[i].err = h.run(ctx, r, caller, tk, b.piece(ps, pe), pe-ps)
			}()
		}
		wg.Wait()
		for _, res := range results {
			if res.start == res.end {
				continue
			}
			if err := j.add(res.out, res.err, res.start); err != nil {
				return nil, err
			}
			start = res.end
		}
	}
	return j.result(), nil
}

// batchJoin joins the outputs of a batch's pieces in order.
type batchJoin struct {
	input, output string
	head          []modelapi.Member
	at            int
	items         []json.RawMessage
}

// add appends the output of the piece starting at item start, or returns
// its error renumbered for the whole request.
func (j *batchJoin) add(out []byte, err error, start int) error {
	if err != nil {
		var ge *abi.Error
		if errors.As(err, &ge) {
			ge.Field = renumber(ge.Field, j.input, start)
		}
		return err
	}
	ms, err := modelapi.ObjectMembers(out)
	if err != nil {
		return &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch slice output: %w", err)}
	}
	found := false
	for i, m := range ms {
		if m.Key != j.output {
			continue
		}
		var part []json.RawMessage
		if err := json.Unmarshal(m.Val, &part); err != nil {
			return &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch output member %s is not a list", j.output)}
		}
		if start > 0 {
			for k := range part {
				part[k] = renumberRowError(part[k], j.input, start)
			}
		}
		j.items = append(j.items, part...)
		if j.head == nil {
			j.head, j.at = ms, i
		}
		found = true
	}
	if !found {
		return &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch output has no member %s", j.output)}
	}
	return nil
}

func (j *batchJoin) result() []byte {
	j.head[j.at].Val = joinArray(j.items)
	return encodeMembers(j.head)
}

// renumberRowError renumbers the "error" member of a result row of a slice
// starting at offset (its field input[i] and its position i, as
// sdk/ml/serve writes them) for the whole request; other rows are returned
// as they are.
func renumberRowError(row json.RawMessage, input string, offset int) json.RawMessage {
	if !bytes.Contains(row, []byte(`"error"`)) {
		return row
	}
	ms, err := modelapi.ObjectMembers(row)
	if err != nil {
		return row
	}
	for i, m := range ms {
		if m.Key != "error" {
			continue
		}
		em, err := modelapi.ObjectMembers(m.Val)
		if err != nil {
			return row
		}
		for j, e := range em {
			switch e.Key {
			case "field":
				var f string
				if json.Unmarshal(e.Val, &f) == nil {
					em[j].Val, _ = json.Marshal(renumber(f, input, offset))
				}
			case "position":
				if n, err := strconv.Atoi(string(bytes.TrimSpace(e.Val))); err == nil {
					em[j].Val = json.RawMessage(strconv.Itoa(n + offset))
				}
			}
		}
		ms[i].Val = encodeMembers(em)
		return encodeMembers(ms)
	}
	return row
}

// renumber turns the field input[i]... of a slice starting at offset into
// input[offset+i]...; other fields are left as they are.
func renumber(field, input string, offset int) string {
	rest, ok := strings.CutPrefix(field, input+"[")
	if !ok {
		return field
	}
	num, tail, ok := strings.Cut(rest, "]")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return field
	}
	return input + "[" + strconv.Itoa(n+offset) + "]" + tail
}
