package oidcprovider

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

// FuzzOwns: any bearer credential is classified without panic, and only a
// JWT-shaped token whose payload names this issuer is claimed.
func FuzzOwns(f *testing.F) {
	p := &Provider{issuer: "https://tox.example/oidc"}
	enc := base64.RawURLEncoding.EncodeToString
	for _, s := range []string{"", "a.b.c", "tg_abc", "..", "x.." + strings.Repeat("A", 100),
		enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(`{"iss":"https://tox.example/oidc"}`)) + ".sig",
		enc([]byte(`{}`)) + "." + enc([]byte(`{"iss":"https://evil.example/oidc"}`)) + ".sig",
		"a." + enc([]byte(`{"iss":["https://tox.example/oidc"]}`)) + ".c",
		"a." + enc([]byte(strings.Repeat("[", 5000))) + ".c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !p.Owns(s) {
			return
		}
		parts := strings.Split(s, ".")
		if len(parts) != 3 || len(s) > maxTokenBytes {
			t.Fatalf("Owns(%q) for a token that is not a JWT", s)
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil || !strings.Contains(string(payload), "tox.example") {
			t.Fatalf("Owns(%q): payload %q", s, payload)
		}
	})
}

// FuzzClientValidate: a registration is checked without panic, and every
// redirect URI it accepts is absolute, bounded, without fragment or wildcard,
// and http(s) for a confidential client.
func FuzzClientValidate(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:9/cb", "https://hub.example/hub/oauth_callback", "javascript:alert(1)",
		"https://a.example/cb#x", "https://a.example/*", "//evil.example", "http:/x", "myapp:/cb", "", "https://" + strings.Repeat("a", 3000)} {
		f.Add("hub", s, false)
		f.Add("cli", s, true)
	}
	f.Fuzz(func(t *testing.T, name, uri string, public bool) {
		in := NewClient{Name: name, RedirectURIs: []string{uri}, Public: public}
		if err := in.validate([]string{"notebooks"}); err != nil {
			return
		}
		u, err := url.Parse(uri)
		if err != nil || !u.IsAbs() || len(uri) > maxURIBytes || strings.ContainsAny(uri, "#*") {
			t.Fatalf("accepted redirect URI %q", uri)
		}
		if !public && u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("confidential client accepted scheme %q", u.Scheme)
		}
		if !clientIDRE.MatchString(in.Name) {
			t.Fatalf("accepted name %q", in.Name)
		}
	})
}
