package modelapi

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Member is one top-level member of a JSON object, in document order.
type Member struct {
	Key string
	Val json.RawMessage
}

// ObjectMembers reads the top-level members of a JSON object in order
// (model answers keep their members' order in every rewrite of them).
func ObjectMembers(b []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []Member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Member{k, v})
	}
	return out, nil
}
