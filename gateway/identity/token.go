package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math/big"
	"strings"
)

// API token format: "tg_" + 43 base62 characters carrying 256 random bits +
// 6 base62 characters of CRC-32 over the first part. The prefix lets secret
// scanners recognise leaked tokens and the checksum lets the gateway refuse a
// mistyped token without asking the store.
const (
	TokenPrefix    = "tg_"
	tokenSecretLen = 43 // ceil(256 / log2(62))
	tokenCheckLen  = 6
	tokenLen       = len(TokenPrefix) + tokenSecretLen + tokenCheckLen
	tokenIDLen     = 24 // hex characters of the SHA-256 used as the record id
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewToken returns a new random API token.
func NewToken() (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	body := TokenPrefix + encode62(new(big.Int).SetBytes(raw[:]), tokenSecretLen)
	return body + checksum(body), nil
}

// WellFormedToken reports whether t has the prefix, length, alphabet and
// checksum of a toxgate API token.
func WellFormedToken(t string) bool {
	if len(t) != tokenLen || !strings.HasPrefix(t, TokenPrefix) {
		return false
	}
	for i := len(TokenPrefix); i < len(t); i++ {
		if strings.IndexByte(base62, t[i]) < 0 {
			return false
		}
	}
	body := t[:len(t)-tokenCheckLen]
	return checksum(body) == t[len(t)-tokenCheckLen:]
}

// TokenHash is the SHA-256 of a token: the only form in which it is stored.
func TokenHash(t string) [32]byte { return sha256.Sum256([]byte(t)) }

// TokenID is the token's public id (its record _id): the first 96 bits of
// its hash in hex. The full hash is stored beside it and compared in
// constant time.
func TokenID(h [32]byte) string { return hex.EncodeToString(h[:])[:tokenIDLen] }

func checksum(body string) string {
	c := crc32.ChecksumIEEE([]byte(body))
	return encode62(new(big.Int).SetUint64(uint64(c)), tokenCheckLen)
}

// encode62 writes n in base62, left-padded with '0' to width.
func encode62(n *big.Int, width int) string {
	out := make([]byte, width)
	for i := range out {
		out[i] = '0'
	}
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0 && n.Sign() > 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

// randomHex returns n random bytes in hex (session ids, CSRF tokens, links).
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// hashHex is the hex SHA-256 of s (stored form of session ids and links).
func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// RandomToken returns 256 random bits in hex (CSRF tokens of the web forms).
func RandomToken() string {
	s, err := randomHex(32)
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return s
}
