package main

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// TestProbe runs `toxgate probe` against a real gateway: 0 for its
// /readyz and /IsAlive, 1 for a 404 and for a port nobody listens on, 2
// for what is not an http(s) URL.
func TestProbe(t *testing.T) {
	g := harness.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/readyz"
	ln.Close()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{g.URL + "/readyz"}, 0, "200 OK"},
		{[]string{g.URL + "/IsAlive"}, 0, "200 OK"},
		{[]string{g.URL + "/no-such-page-xyz"}, 1, "404"},
		{[]string{closed}, 1, "refused"},
		{[]string{"ftp://x/readyz"}, 2, "not an http(s) URL"},
		{[]string{"a", "b"}, 2, "usage: toxgate probe"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"-config", "", "probe"}, c.args...), &out, &errb)
		if code != c.code || !strings.Contains(out.String()+errb.String(), c.msg) {
			t.Errorf("probe %v: exit %d, want %d with %q; got %s%s", c.args, code, c.code, c.msg, out.String(), errb.String())
		}
	}
}
