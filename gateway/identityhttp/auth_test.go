package identityhttp

import (
	"testing"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
)

func newHeader(k, v string) *fasthttp.RequestHeader {
	var h fasthttp.RequestHeader
	h.Set(k, v)
	return &h
}

func TestCredentialHeaderForms(t *testing.T) {
	tok, _ := identity.NewToken()
	for _, tc := range []struct{ header, value string }{
		{"Authorization", "Bearer " + tok},
		{"Authorization", "bearer " + tok},
		{"Authorization", tok},
		{"X-CKAN-API-Key", tok},
	} {
		h := newHeader(tc.header, tc.value)
		if got := Credential(h); got != tok {
			t.Errorf("%s: %q -> %q", tc.header, tc.value, got)
		}
	}
	if got := Credential(newHeader("X-Other", tok)); got != "" {
		t.Errorf("credential from an unrelated header: %q", got)
	}
}
