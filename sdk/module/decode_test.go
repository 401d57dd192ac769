package module

import (
	"errors"
	"testing"

	"toxgate/sdk/abi"
)

type decInner struct {
	N int `json:"n"`
}

type decIn struct {
	Name  string     `json:"name"`
	Dose  float64    `json:"dose"`
	Inner decInner   `json:"inner"`
	List  []decInner `json:"list"`
	Tags  []string   `json:"tags"`
}

// A body the handler's type does not accept is an input error naming the
// field by its dotted path, as the host's schema check names it.
func TestDecodeErrorsNameTheField(t *testing.T) {
	for _, c := range []struct{ body, field, msg string }{
		{`{"name":1}`, "name", "must be of type string, not number"},
		{`{"dose":"x"}`, "dose", "must be of type number, not string"},
		{`{"inner":{"n":"x"}}`, "inner.n", "must be of type integer, not string"},
		{`{"inner":{"n":1.5}}`, "inner.n", "must be of type integer, not number 1.5"},
		{`{"list":[{"n":true}]}`, "list.n", "must be of type integer, not bool"},
		{`{"tags":[1]}`, "tags", "must be of type string, not number"},
		{`{"colour":1}`, "colour", "unknown field"},
		{`{"name":`, "", "invalid JSON body: unexpected EOF"},
		{`[1]`, "", "must be of type object, not array"},
	} {
		var v decIn
		err := decode([]byte(c.body), &v)
		var e *abi.Error
		if !errors.As(err, &e) || e.Kind != abi.KindInvalidInput || e.Field != c.field || e.Message != c.msg {
			t.Errorf("%s: got %#v, want field %q message %q", c.body, err, c.field, c.msg)
		}
	}
	var v decIn
	if err := decode([]byte(`{"name":"DOX","dose":60,"inner":{"n":2},"list":[{"n":1}],"tags":["a"]}`), &v); err != nil ||
		v.Name != "DOX" || v.Dose != 60 || v.Inner.N != 2 || len(v.List) != 1 || v.Tags[0] != "a" {
		t.Fatalf("valid body: %+v, %v", v, err)
	}
}
