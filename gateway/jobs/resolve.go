package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"toxgate/gateway/catalogclient"
	"toxgate/plugins/contract"
)

// resolution is a structure cell the job resolved from a compound name or
// identifier, as the catalog's compound_resolve answers it (the resolver
// of GET /chem/resolve and the model pages).
type resolution struct {
	Input     string            `json:"input"`
	SMILES    string            `json:"smiles"`
	MatchedBy string            `json:"matched_by"`
	DTXSID    string            `json:"dtxsid"`
	Name      string            `json:"preferred_name"`
	CAS       string            `json:"cas"`
	Sources   map[string]string `json:"sources"`
}

// resolveBatch bounds the cells of one compound_resolve call (the action
// takes at most 10,000).
const resolveBatch = 1000

// resolveCells resolves the structure cells of rows that are compound
// names, synonyms, CAS numbers, DTXSIDs or InChIKeys (never parsed as
// SMILES), as the job's user: the answer per row, nil for a cell left as
// written (a SMILES, or text the model refuses with its own message). A
// cell the resolver refuses (a CAS number with a wrong check digit) gets
// the resolver's message as its row's error in items. When the resolver is
// unavailable every cell goes to the model as written.
func (s *Service) resolveCells(ctx context.Context, j *Job, rows [][]string, col int, items []string) []*resolution {
	out := make([]*resolution, len(rows))
	if s.catalog == nil {
		return out
	}
	caller := contract.Identity{UserID: j.UserID, Name: j.User, Sysadmin: j.Sysadmin}
	var idx []int
	for i, row := range rows {
		if items[i] == "" && strings.TrimSpace(cell(row, col)) != "" {
			idx = append(idx, i)
		}
	}
	for len(idx) > 0 {
		part := idx[:min(len(idx), resolveBatch)]
		q := make([]any, len(part))
		for k, i := range part {
			q[k] = strings.TrimSpace(cell(rows[i], col))
		}
		var answers []*resolution
		err := s.catalog.Do(ctx, caller, "compound_resolve", map[string]any{"q": q}, &answers)
		if err != nil {
			if k, msg, ok := refusedItem(err); ok && k < len(part) {
				items[part[k]] = rowError("compound: " + msg)
				idx = append(idx[:k], idx[k+1:]...)
				continue
			}
			s.log.Warn("jobs: compound names not resolved; cells go to the model as written", "job", j.ID, "err", err)
			return out
		}
		for k, a := range answers {
			if a != nil && k < len(part) && a.SMILES != "" {
				out[part[k]] = a
			}
		}
		idx = idx[len(part):]
	}
	return out
}

// refusedItem reads compound_resolve's refusal of one item of a list
// ("item N: reason" on field q) as its 0-based index and reason.
func refusedItem(err error) (int, string, bool) {
	var ce *catalogclient.Error
	if !errors.As(err, &ce) || ce.Err != nil || ce.Status != 409 || len(ce.Fields["q"]) == 0 {
		return 0, "", false
	}
	msg := ce.Fields["q"][0]
	head, rest, ok := strings.Cut(strings.TrimPrefix(msg, "item "), ": ")
	n, err2 := strconv.Atoi(head)
	if !ok || err2 != nil || n < 1 || !strings.HasPrefix(msg, "item ") {
		return 0, "", false
	}
	return n - 1, rest, true
}

// withResolution adds the resolution of a row's structure to its answer
// (a JSON object), after the model's members: resolved_smiles, resolved_by
// and the compound's identifiers and sources, so the result table records
// what the model scored.
func withResolution(item string, r *resolution) string {
	body := strings.TrimSpace(item)
	if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
		return item
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(body, "}"))
	empty := strings.TrimSpace(body[1:len(body)-1]) == ""
	set := func(k, v string) {
		if v == "" {
			return
		}
		if !empty {
			b.WriteByte(',')
		}
		empty = false
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	set("resolved_smiles", r.SMILES)
	set("resolved_by", r.MatchedBy)
	set("resolved_dtxsid", r.DTXSID)
	set("resolved_name", r.Name)
	set("resolved_cas", r.CAS)
	src := make([]string, 0, len(r.Sources))
	for _, k := range []string{"smiles", "dtxsid", "preferred_name", "cas", "name", "synonym", "inchikey"} {
		if v := r.Sources[k]; v != "" {
			src = append(src, k+"="+v)
		}
	}
	set("resolved_sources", strings.Join(src, " "))
	b.WriteByte('}')
	return b.String()
}
