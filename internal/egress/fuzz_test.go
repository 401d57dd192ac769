package egress

import (
	"net/netip"
	"testing"
)

// FuzzPolicy: any allow entry parses or is refused without a panic, and
// for any address the IPv4-mapped IPv6 form of an IPv4 address is never
// allowed where the plain form is refused, nor is a refused address
// allowed by an entry that does not cover it.
func FuzzPolicy(f *testing.F) {
	for _, s := range [][3]string{
		{"10.0.0.5", "10.0.0.5", "x"},
		{"10.1.0.0/16", "10.1.2.3", "x"},
		{"ckan.internal:443", "10.9.9.9", "ckan.internal"},
		{"*.corp.example", "192.168.1.1", "a.corp.example"},
		{"[::1]:8080", "::1", "::1"},
		{"::ffff:127.0.0.0/104", "127.0.0.1", "localhost"},
		{"", "169.254.169.254", "metadata"},
		{"fd00::/8", "fd00:ec2::254", "x"},
		{"0.0.0.0/0", "8.8.8.8", "x"},
	} {
		f.Add(s[0], s[1], s[2], uint16(80))
	}
	f.Fuzz(func(t *testing.T, entry, addr, host string, port uint16) {
		p, err := New(Options{Allow: []string{entry}})
		if err != nil {
			p = nil
		}
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return
		}
		plain := p.Check(host, netip.AddrPortFrom(a, port))
		if a.Is4() {
			mapped := p.Check(host, netip.AddrPortFrom(netip.AddrFrom16(a.As16()), port))
			if plain != nil && mapped == nil {
				t.Fatalf("entry %q: %s refused but its mapped form allowed", entry, a)
			}
		}
		def := (*Policy)(nil).Check(host, netip.AddrPortFrom(a, port))
		if def != nil && plain == nil && p == nil {
			t.Fatalf("no entry, yet %s allowed", a)
		}
	})
}
