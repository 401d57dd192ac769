package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Every range the policy exists for is refused, in every spelling, and
// public addresses are not.
func TestRefusedRanges(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"127.0.0.1":                 "loopback",
		"127.255.255.254":           "loopback",
		"::1":                       "loopback",
		"10.0.0.1":                  "private",
		"172.16.0.1":                "private",
		"172.31.255.255":            "private",
		"192.168.1.1":               "private",
		"fc00::1":                   "private",
		"fdff:ffff::1":              "private",
		"169.254.0.1":               "link-local",
		"169.254.169.254":           "cloud metadata",
		"fd00:ec2::254":             "cloud metadata",
		"fe80::1":                   "link-local",
		"febf::1":                   "link-local",
		"224.0.0.1":                 "multicast",
		"239.255.255.250":           "multicast",
		"ff02::1":                   "multicast",
		"ff05::2":                   "multicast",
		"0.0.0.0":                   "unspecified",
		"0.1.2.3":                   "unspecified",
		"::":                        "unspecified",
		"100.64.0.1":                "shared address space (CGNAT)",
		"100.127.255.254":           "shared address space (CGNAT)",
		"::ffff:127.0.0.1":          "IPv4-mapped IPv6 (loopback)",
		"::ffff:10.1.2.3":           "IPv4-mapped IPv6 (private)",
		"::ffff:169.254.169.254":    "IPv4-mapped IPv6 (cloud metadata)",
		"::ffff:100.64.0.1":         "IPv4-mapped IPv6 (shared address space (CGNAT))",
		"::ffff:0.0.0.0":            "IPv4-mapped IPv6 (unspecified)",
		"::ffff:224.0.0.1":          "IPv4-mapped IPv6 (multicast)",
		"64:ff9b::7f00:1":           "outside IPv6 global unicast",
		"2002:7f00:1::1":            "special-purpose", // 6to4 of 127.0.0.1
		"2001::1":                   "special-purpose", // Teredo
		"255.255.255.255":           "special-purpose",
		"192.0.2.1":                 "special-purpose",
		"198.18.0.1":                "special-purpose",
		"240.0.0.1":                 "special-purpose",
		"::ffff:192.168.0.1":        "IPv4-mapped IPv6 (private)",
		"0:0:0:0:0:ffff:7f00:0001":  "IPv4-mapped IPv6 (loopback)",
		"fe80::1%lo":                "link-local",
		"::127.0.0.1":               "outside IPv6 global unicast", // IPv4-compatible
		"fd00:ec2:0:0:0:0:0:0254":   "cloud metadata",
		"0000:0000:0000::0000:0001": "loopback",
	}
	for s, kind := range refused {
		a := netip.MustParseAddr(s)
		err := p.Check("example.org", netip.AddrPortFrom(a, 80))
		var de *DeniedError
		if !errors.As(err, &de) || !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s: not refused: %v", s, err)
			continue
		}
		if de.Reason != kind {
			t.Errorf("%s: reason %q, want %q", s, de.Reason, kind)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "100.63.255.255", "100.128.0.1", "172.32.0.1"} {
		if err := p.Check("example.org", netip.AddrPortFrom(netip.MustParseAddr(s), 443)); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
	// the nil policy is the default policy
	var nilP *Policy
	if err := nilP.Check("x", netip.MustParseAddrPort("127.0.0.1:80")); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("nil policy: %v", err)
	}
}

// Allow entries open exactly what they name.
func TestAllowEntries(t *testing.T) {
	p, err := New(Options{Allow: []string{"10.0.0.5", "10.1.0.0/16", "127.0.0.1:8443", "[::1]:9000", "ckan.internal:443",
		"*.corp.example", "Files.Lab.", "fd00:1::/64", "::ffff:192.168.7.0/120"}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host, addr string
		ok         bool
	}{
		{"10.0.0.5", "10.0.0.5:80", true},
		{"x.example", "10.0.0.5:22", true},
		{"10.0.0.6", "10.0.0.6:80", false},
		{"10.1.200.3", "10.1.200.3:8080", true},
		{"10.2.0.1", "10.2.0.1:8080", false},
		{"127.0.0.1", "127.0.0.1:8443", true},
		{"127.0.0.1", "127.0.0.1:8444", false},
		{"localhost", "127.0.0.1:8443", true}, // an address entry allows whatever name leads to it
		{"::ffff:127.0.0.1", "[::ffff:127.0.0.1]:8443", true},
		{"::1", "[::1]:9000", true},
		{"::1", "[::1]:9001", false},
		{"ckan.internal", "10.9.9.9:443", true},
		{"CKAN.internal.", "10.9.9.9:443", true},
		{"ckan.internal", "10.9.9.9:80", false},
		{"other.internal", "10.9.9.9:443", false},
		{"a.corp.example", "192.168.0.9:80", true},
		{"a.b.corp.example", "192.168.0.9:80", true},
		{"corp.example", "192.168.0.9:80", false},
		{"evilcorp.example", "192.168.0.9:80", false},
		{"files.lab", "172.20.0.1:8080", true},
		{"fd00:1::9", "[fd00:1::9]:80", true},
		{"fd00:2::9", "[fd00:2::9]:80", false},
		{"192.168.7.9", "192.168.7.9:80", true},
		{"192.168.8.9", "192.168.8.9:80", false},
	}
	for _, c := range cases {
		err := p.Check(c.host, netip.MustParseAddrPort(c.addr))
		if (err == nil) != c.ok {
			t.Errorf("%s at %s: allowed %v, want %v (%v)", c.host, c.addr, err == nil, c.ok, err)
		}
	}
	for _, bad := range []string{"", " ", "10.0.0.0/33", "10.0.0.1:0", "10.0.0.1:70000", "host:port", "http://x", "a..b", "[::1", "fe80::1%eth0",
		"a b", strings.Repeat("a", 400), "*."} {
		if _, err := New(Options{Allow: []string{bad}}); err == nil {
			t.Errorf("allow entry %q accepted", bad)
		} else if !strings.Contains(err.Error(), "allow entry") {
			t.Errorf("allow entry %q: error does not name it: %v", bad, err)
		}
	}
	q, err := p.WithAllowed("203.0.113.0/24")
	if err != nil || q.Check("x", netip.MustParseAddrPort("203.0.113.5:80")) != nil || p.Check("x", netip.MustParseAddrPort("203.0.113.5:80")) == nil {
		t.Errorf("WithAllowed: %v", err)
	}
	if len(q.Allowed()) != len(p.Allowed())+1 {
		t.Errorf("Allowed: %v", q.Allowed())
	}
}
