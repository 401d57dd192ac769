package tusup

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	id := strings.Repeat("0f", 16)
	for in, ok := range map[string]bool{
		id: true, "http://h/uploads/" + id: true, "/uploads/" + id: true,
		strings.ToUpper(id): false, id + "/": false, id[:31]: false, id + "0": false,
		"": false, "../" + id[:29]: false, strings.Repeat("a", 5000): false,
	} {
		got, gotOK := ParseID(in)
		if gotOK != ok || (ok && got != id) {
			t.Errorf("ParseID(%q) = %q, %v; want ok=%v", in, got, gotOK, ok)
		}
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{strings.Repeat("ab", 16), "/uploads/" + strings.Repeat("01", 16), "", "/", "x/../" + strings.Repeat("a", 32)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := ParseID(s)
		if !ok {
			return
		}
		if len(id) != idLen || strings.ContainsAny(id, "/.") || !strings.HasSuffix(s, id) {
			t.Fatalf("ParseID(%q) = %q", s, id)
		}
		if again, ok2 := ParseID(id); !ok2 || again != id {
			t.Fatalf("ParseID(%q) not idempotent", id)
		}
	})
}

func TestParseMetadata(t *testing.T) {
	m, err := ParseMetadata("package_id ZGF0YQ==, filename YS5jc3Y=,empty")
	if err != nil || m["package_id"] != "data" || m["filename"] != "a.csv" || m["empty"] != "" {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"a !!", "a YQ==,a YQ==", ",", strings.Repeat("a", MaxMetadataBytes+1)} {
		if _, err := ParseMetadata(bad); err == nil {
			t.Errorf("ParseMetadata(%q) accepted", bad)
		}
	}
}

func FuzzParseMetadata(f *testing.F) {
	for _, s := range []string{"", "package_id ZGF0YQ==", "a,b YQ==", "k  YQ==", "a YQ==,a YQ=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMetadata(s)
		if err != nil {
			return
		}
		total := 0
		for k, v := range m {
			if k == "" || strings.ContainsAny(k, " \t,") {
				t.Fatalf("key %q from %q", k, s)
			}
			total += len(k) + len(v)
		}
		if total > len(s) {
			t.Fatalf("%d bytes of metadata from a %d-byte header", total, len(s))
		}
	})
}

func TestParseChecksum(t *testing.T) {
	d := sha256.Sum256([]byte("x"))
	c, err := parseChecksum("sha256 " + base64.StdEncoding.EncodeToString(d[:]))
	if err != nil || c.algo != "sha256" || string(c.digest) != string(d[:]) {
		t.Fatalf("%v %v", c, err)
	}
	for _, bad := range []string{"sha256", "sha256 !!", "crc32 AAAA", "sha1 " + base64.StdEncoding.EncodeToString(d[:]), "sha256  " + base64.StdEncoding.EncodeToString(d[:])} {
		if _, err := parseChecksum(bad); err == nil {
			t.Errorf("parseChecksum(%q) accepted", bad)
		}
	}
}

func FuzzParseChecksum(f *testing.F) {
	d := sha256.Sum256([]byte("x"))
	for _, s := range []string{"sha256 " + base64.StdEncoding.EncodeToString(d[:]), "md5 AAAAAAAAAAAAAAAAAAAAAA==", "sha1 x", "", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseChecksum(s)
		if err != nil {
			return
		}
		if len(c.digest) != c.hash().Size() {
			t.Fatalf("%q: digest of %d bytes for %s", s, len(c.digest), c.algo)
		}
	})
}
