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

// A request to a batch route (abi.Batch) whose list is larger than one slice
// (Config.BatchSliceItems, BatchSliceBytes) runs as several calls, one per
// slice, one after the other, each waiting its caller's turn at the gate:
// another caller's call waits for one slice at most, not for the whole batch.

// batchSlice is the input of one slice and the index of its first item.
type batchSlice struct {
	body   []byte
	offset int
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

// slices cuts a request to a batch route into slices; nil when the route has
// no batch member, the member is not a list, or the list fits in one slice.
func (h *Host) slices(bt *abi.Batch, body []byte) []batchSlice {
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
	if len(items) <= h.cfg.BatchSliceItems && len(ms[at].Val) <= h.cfg.BatchSliceBytes {
		return nil
	}
	var out []batchSlice
	for start := 0; start < len(items); {
		end, size := start+1, len(items[start])
		for end < len(items) && end-start < h.cfg.BatchSliceItems && size+len(items[end]) <= h.cfg.BatchSliceBytes {
			size += len(items[end])
			end++
		}
		part := make([]modelapi.Member, len(ms))
		copy(part, ms)
		part[at].Val = joinArray(items[start:end])
		out = append(out, batchSlice{body: encodeMembers(part), offset: start})
		start = end
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// callBatch runs the slices in order and joins their outputs; an error of a
// slice is the answer, its field renumbered for the whole request.
func (h *Host) callBatch(ctx context.Context, r route, caller string, bt *abi.Batch, slices []batchSlice) ([]byte, error) {
	var head []modelapi.Member
	at := -1
	var items []json.RawMessage
	for _, s := range slices {
		out, err := h.call(ctx, r, caller, s.body)
		if err != nil {
			var ge *abi.Error
			if errors.As(err, &ge) {
				ge.Field = renumber(ge.Field, bt.Input, s.offset)
			}
			return nil, err
		}
		ms, err := modelapi.ObjectMembers(out)
		if err != nil {
			return nil, &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch slice output: %w", err)}
		}
		found := false
		for i, m := range ms {
			if m.Key != bt.Output {
				continue
			}
			var part []json.RawMessage
			if err := json.Unmarshal(m.Val, &part); err != nil {
				return nil, &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch output member %s is not a list", bt.Output)}
			}
			if s.offset > 0 {
				for k := range part {
					part[k] = renumberRowError(part[k], bt.Input, s.offset)
				}
			}
			items = append(items, part...)
			if head == nil {
				head, at = ms, i
			}
			found = true
		}
		if !found {
			return nil, &wasmrt.Failure{Kind: wasmrt.FailBadOutput, Err: fmt.Errorf("batch output has no member %s", bt.Output)}
		}
	}
	head[at].Val = joinArray(items)
	return encodeMembers(head), nil
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
