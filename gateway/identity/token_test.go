package identity

import (
	"strings"
	"testing"
)

func TestTokenFormat(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok, "tg_") || len(tok) != tokenLen {
			t.Fatalf("token %q: want prefix tg_ and length %d", tok, tokenLen)
		}
		if !WellFormedToken(tok) {
			t.Fatalf("fresh token %q is not well formed", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q generated twice", tok)
		}
		seen[tok] = true
	}
}

func TestTokenChecksumCatchesTypos(t *testing.T) {
	tok, _ := NewToken()
	for i := len(TokenPrefix); i < len(tok); i++ {
		c := byte('A')
		if tok[i] == 'A' {
			c = 'B'
		}
		typo := tok[:i] + string(c) + tok[i+1:]
		if WellFormedToken(typo) {
			t.Errorf("a changed character at %d still passes the checksum: %q", i, typo)
		}
	}
	for _, bad := range []string{"", "tg_", tok[:len(tok)-1], tok + "0", "xx" + tok[2:], strings.Replace(tok, tok[5:6], "-", 1)} {
		if WellFormedToken(bad) {
			t.Errorf("WellFormedToken(%q) = true", bad)
		}
	}
}

func TestTokenCarries256Bits(t *testing.T) {
	// 43 base62 digits hold at least 256 bits: 62^43 > 2^256.
	if got := float64(tokenSecretLen) * 5.954196310386876; got < 256 {
		t.Fatalf("secret part holds %.1f bits", got)
	}
	a, _ := NewToken()
	b, _ := NewToken()
	if TokenID(TokenHash(a)) == TokenID(TokenHash(b)) {
		t.Fatal("two tokens share an id")
	}
	if len(TokenID(TokenHash(a))) != tokenIDLen {
		t.Fatalf("id length %d", len(TokenID(TokenHash(a))))
	}
}

func TestPasswordHashing(t *testing.T) {
	h, err := HashPassword("correct horse battery", 4)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h, "correct horse") || !strings.HasPrefix(h, "$2") {
		t.Fatalf("hash %q is not a bcrypt hash", h)
	}
	if !CheckPassword(h, "correct horse battery") {
		t.Fatal("right password refused")
	}
	for _, wrong := range []string{"", "correct horse batter", "Correct horse battery"} {
		if CheckPassword(h, wrong) {
			t.Fatalf("wrong password %q accepted", wrong)
		}
	}
	if CheckPassword("", "") {
		t.Fatal("empty hash accepted")
	}
	h2, _ := HashPassword("correct horse battery", 4)
	if h2 == h {
		t.Fatal("two hashes of the same password are equal (no salt)")
	}
}

func TestPasswordRules(t *testing.T) {
	if m := ValidatePassword("short"); m != "Your password must be 8 characters or longer" {
		t.Fatalf("short password: %q", m)
	}
	if m := ValidatePassword(strings.Repeat("x", 73)); m == "" {
		t.Fatal("73-byte password accepted (bcrypt would truncate it)")
	}
	if m := ValidatePassword("eight888"); m != "" {
		t.Fatalf("8-character password refused: %q", m)
	}
	p, err := GeneratePassword(16)
	if err != nil || len(p) != 16 || ValidatePassword(p) != "" {
		t.Fatalf("generated password %q, %v", p, err)
	}
}

func TestNameRules(t *testing.T) {
	if got := ValidateName("x"); len(got) != 2 || got[0] != "Must be at least 2 characters long" {
		t.Fatalf("ValidateName(x) = %q", got)
	}
	if got := ValidateName("Alice"); len(got) == 0 {
		t.Fatal("upper-case name accepted")
	}
	if got := ValidateName("alice_b-2"); len(got) != 0 {
		t.Fatalf("valid name refused: %q", got)
	}
}
