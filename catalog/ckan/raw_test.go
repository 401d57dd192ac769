package ckan

import (
	"bytes"
	"testing"
)

// TestRawJSONAsEncoded checks that pre-encoded results give the bytes
// that encoding the values gives, alone and inside the envelope.
func TestRawJSONAsEncoded(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ back`, "tab\tnew\nline", "<b>&</b>", "ünïcødé ☢ 𝔘", "\u2028\x00\x7f"} {
		want, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got[1:], want)
		}
	}
	value := map[string]any{"a": []any{1, "ü"}, "b": map[string]any{"c": nil}}
	enc, err := Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	want := Success("http://site/", "x", value)
	parts := RawJSONParts{enc[:5], enc[5:9], nil, enc[9:]}
	for _, res := range []any{RawJSON(enc), parts} {
		got := Success("http://site/", "x", res)
		if got.Status != 200 || !bytes.Equal(got.Body, want.Body) {
			t.Fatalf("Success(%T) = %s, want %s", res, got.Body, want.Body)
		}
		if b, err := Marshal(res); err != nil || !bytes.Equal(b, enc) {
			t.Fatalf("Marshal(%T) = %s %v", res, b, err)
		}
		// nested in another value
		b, err := Marshal(map[string]any{"r": res})
		if w, _ := Marshal(map[string]any{"r": value}); err != nil || !bytes.Equal(b, w) {
			t.Fatalf("nested %T: %s, want %s", res, b, w)
		}
	}
}
