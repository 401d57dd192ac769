package identity

import (
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"
)

// HashPassword hashes pw with bcrypt at cost (bcrypt.DefaultCost when out of range).
func HashPassword(pw string, cost int) (string, error) {
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword reports whether pw matches hash. An empty hash never matches.
func CheckPassword(hash, pw string) bool {
	if hash == "" {
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// dummyHash is compared against when the user does not exist, so that an
// unknown name takes as long as a wrong password.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("toxgate-dummy-password"), bcrypt.DefaultCost)

// burnPasswordCheck spends the time of one password check.
func burnPasswordCheck(pw string) {
	_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(pw))
}

// passwordAlphabet avoids look-alike characters (0/O, 1/l/I).
const passwordAlphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// GeneratePassword returns a random password of n characters (≥ 8).
func GeneratePassword(n int) (string, error) {
	if n < MinPasswordLen {
		return "", errors.New("generate password: too short")
	}
	b := make([]byte, n)
	max := byte(256 - 256%len(passwordAlphabet))
	for i := 0; i < n; {
		var one [1]byte
		if _, err := rand.Read(one[:]); err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		if one[0] >= max {
			continue
		}
		b[i] = passwordAlphabet[int(one[0])%len(passwordAlphabet)]
		i++
	}
	return string(b), nil
}
