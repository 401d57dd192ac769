// Package egress is the one policy for outbound fetches of URLs that users
// or remote sites choose: the DataStore loader's links, the files of
// `toxgate catalog import`. It refuses loopback, private, link-local,
// multicast, unspecified, shared (CGNAT) and the other special-purpose
// addresses of the IANA registries, IPv4-mapped IPv6 forms included, and
// every scheme but http and https. The address is checked when the
// connection is made, after DNS resolution, for the IP actually dialled, so
// a name that resolves (or re-resolves) to an internal address cannot pass;
// every redirect is checked the same way and their number is capped. An
// allow-list opens chosen internal destinations. See README.md.
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"code.dny.dev/ssrf"
)

// DefaultMaxRedirects is the redirect cap of the nil (default) Policy.
const DefaultMaxRedirects = 5

// Options configure a Policy.
type Options struct {
	// Allow lists destinations that are reached although their address is
	// refused by default. Each entry is one of:
	//   - an IP address ("10.0.0.5", "fd00::5"): any port on it;
	//   - a CIDR prefix ("10.1.0.0/16", "fd00:1::/64"): any port in it;
	//   - an IP address and port ("10.0.0.5:8080", "[fd00::5]:8443");
	//   - a host name ("ckan.internal"), any port, or with a port
	//     ("ckan.internal:443"); "*.corp.example" matches every name under
	//     corp.example. A name is trusted with whatever address it resolves to.
	Allow []string
	// MaxRedirects is the most redirects one fetch follows (0: none).
	MaxRedirects int
}

// Policy decides which destinations outbound fetches may reach. A nil
// *Policy is the default policy: nothing internal is allowed. A Policy is
// safe for concurrent use.
type Policy struct {
	nets         []allowNet
	hosts        []allowHost
	entries      []string
	maxRedirects int
}

// allowNet is an allow entry by address: a prefix and a port (0: any).
type allowNet struct {
	prefix netip.Prefix
	port   uint16
}

// allowHost is an allow entry by name: a lower-case name without the
// trailing dot, a suffix match when wild ("*.name"), and a port (0: any).
type allowHost struct {
	name string
	wild bool
	port uint16
}

// guard is the address classification: every prefix of the IANA special
// purpose registries is refused, and for IPv6 everything outside global
// unicast (2000::/3), which covers ULA, link-local, multicast, the
// unspecified and loopback addresses and the IPv4-mapped forms.
var guard = ssrf.New(ssrf.WithAnyPort(), ssrf.WithNetworks("tcp4", "tcp6"))

// New returns the policy of o; an allow entry that does not parse is an
// error naming it.
func New(o Options) (*Policy, error) {
	if o.MaxRedirects < 0 {
		return nil, fmt.Errorf("egress: max redirects %d is negative", o.MaxRedirects)
	}
	p := &Policy{maxRedirects: o.MaxRedirects}
	if err := p.add(o.Allow); err != nil {
		return nil, err
	}
	return p, nil
}

// WithAllowed returns a copy of p that also allows entries (the forms of
// Options.Allow), e.g. the one site an operator named for an import.
func (p *Policy) WithAllowed(entries ...string) (*Policy, error) {
	q := &Policy{maxRedirects: DefaultMaxRedirects}
	if p != nil {
		q.maxRedirects = p.maxRedirects
		q.nets = append(q.nets, p.nets...)
		q.hosts = append(q.hosts, p.hosts...)
		q.entries = append(q.entries, p.entries...)
	}
	if err := q.add(entries); err != nil {
		return nil, err
	}
	return q, nil
}

// Allowed lists the policy's allow entries as given.
func (p *Policy) Allowed() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.entries...)
}

// MaxRedirects is the most redirects one fetch follows.
func (p *Policy) MaxRedirects() int {
	if p == nil {
		return DefaultMaxRedirects
	}
	return p.maxRedirects
}

func (p *Policy) add(entries []string) error {
	for _, e := range entries {
		if err := p.addOne(e); err != nil {
			return fmt.Errorf("egress: allow entry %q: %w", e, err)
		}
		p.entries = append(p.entries, e)
	}
	return nil
}

// maxEntry bounds an allow entry's length (a host name is at most 253
// bytes; a port and brackets add a few).
const maxEntry = 300

func (p *Policy) addOne(e string) error {
	e = strings.TrimSpace(e)
	if e == "" {
		return errors.New("empty")
	}
	if len(e) > maxEntry {
		return fmt.Errorf("longer than %d bytes", maxEntry)
	}
	if strings.Contains(e, "/") {
		pre, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("not a CIDR prefix: %w", err)
		}
		if pre.Addr().Zone() != "" {
			return errors.New("a zone is not allowed in a prefix")
		}
		p.nets = append(p.nets, allowNet{prefix: unmapPrefix(pre.Masked())})
		return nil
	}
	if a, err := netip.ParseAddr(e); err == nil {
		return p.addAddr(a, 0)
	}
	host, port := e, uint16(0)
	if h, ps, err := net.SplitHostPort(e); err == nil {
		n, err := strconv.ParseUint(ps, 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("invalid port %q", ps)
		}
		host, port = h, uint16(n)
		if a, err := netip.ParseAddr(host); err == nil {
			return p.addAddr(a, port)
		}
	} else if strings.Contains(e, "[") || strings.Count(e, ":") > 0 {
		return fmt.Errorf("not an address, prefix, host name or host:port: %w", err)
	}
	wild := false
	if strings.HasPrefix(host, "*.") {
		wild, host = true, host[2:]
	}
	name, ok := hostName(host)
	if !ok {
		return errors.New("not a valid host name")
	}
	p.hosts = append(p.hosts, allowHost{name: name, wild: wild, port: port})
	return nil
}

func (p *Policy) addAddr(a netip.Addr, port uint16) error {
	if a.Zone() != "" {
		return errors.New("a zone is not allowed")
	}
	a = a.Unmap()
	p.nets = append(p.nets, allowNet{prefix: netip.PrefixFrom(a, a.BitLen()), port: port})
	return nil
}

// unmapPrefix turns an IPv4-mapped IPv6 prefix (::ffff:10.0.0.0/104) into
// the IPv4 prefix it stands for, so that it matches unmapped addresses.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// hostName checks a DNS name (letters, digits, hyphens, underscores, dots)
// and returns it in lower case without a trailing dot.
func hostName(h string) (string, bool) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return h, true
}

// Check decides a connection to addr made for host (the name or address
// in the URL): nil when it is allowed, else a *DeniedError.
func (p *Policy) Check(host string, addr netip.AddrPort) error {
	if p.allowed(host, addr) {
		return nil
	}
	if err := guard.SafeAddr(addr.Addr()); err != nil {
		return &DeniedError{Host: host, Addr: addr.String(), Reason: Classify(addr.Addr())}
	}
	return nil
}

func (p *Policy) allowed(host string, addr netip.AddrPort) bool {
	if p == nil {
		return false
	}
	ip, port := addr.Addr().Unmap().WithZone(""), addr.Port()
	for _, n := range p.nets {
		if n.prefix.Contains(ip) && (n.port == 0 || n.port == port) {
			return true
		}
	}
	if len(p.hosts) == 0 {
		return false
	}
	name, ok := hostName(host)
	if !ok {
		return false
	}
	for _, h := range p.hosts {
		if h.port != 0 && h.port != port {
			continue
		}
		if (!h.wild && name == h.name) || (h.wild && strings.HasSuffix(name, "."+h.name)) {
			return true
		}
	}
	return false
}

// Classify names the kind of a refused address, for logs: loopback,
// private, link-local, multicast, unspecified, shared (CGNAT),
// IPv4-mapped, or special-purpose for the rest of the registries.
func Classify(a netip.Addr) string {
	a = a.WithZone("")
	switch {
	case a == metadataV4 || a == metadataV6:
		return "cloud metadata"
	case a.Is4In6():
		return "IPv4-mapped IPv6 (" + Classify(a.Unmap()) + ")"
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified() || (a.Is4() && a.As4()[0] == 0):
		return "unspecified"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case cgnat.Contains(a):
		return "shared address space (CGNAT)"
	case a.Is6() && !ssrf.IPv6GlobalUnicast.Contains(a):
		return "outside IPv6 global unicast"
	}
	return "special-purpose"
}

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
)

// ErrNotAllowed is what every refused destination wraps.
var ErrNotAllowed = errors.New("the address is not allowed")

// DeniedError is a connection the policy refused.
type DeniedError struct {
	// Host is the name or address of the URL.
	Host string
	// Addr is the address the connection would have gone to ("" when the
	// URL itself was refused).
	Addr string
	// Reason says why (the kind of address, or the scheme).
	Reason string
}

// Error implements error.
func (e *DeniedError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("egress: %s refused: %s", e.Host, e.Reason)
	}
	return fmt.Sprintf("egress: %s (%s) refused: %s address not in egress.allow", e.Addr, e.Host, e.Reason)
}

// Unwrap makes errors.Is(err, ErrNotAllowed) true.
func (e *DeniedError) Unwrap() error { return ErrNotAllowed }
