package chemindex

import (
	"fmt"
	"strings"
)

// Kind is what a query string names.
type Kind string

// The kinds of identifier a query can be.
const (
	KindCAS      Kind = "cas"
	KindDTXSID   Kind = "dtxsid"
	KindInChIKey Kind = "inchikey"
	KindSMILES   Kind = "smiles"
	KindName     Kind = "name"
)

// MaxQueryLength bounds a query: names, identifiers and SMILES longer than
// this are refused before any parsing.
const MaxQueryLength = 2000

// CASError is a CAS registry number whose check digit is wrong.
type CASError struct {
	CAS      string
	Expected int
}

func (e *CASError) Error() string {
	return fmt.Sprintf("CAS number %s has a wrong check digit: %c, the digits before it give %d", e.CAS, e.CAS[len(e.CAS)-1], e.Expected)
}

// looksLikeCAS reports whether s has the shape of a CAS registry number:
// 2 to 7 digits, a hyphen, 2 digits, a hyphen, one check digit.
func looksLikeCAS(s string) bool {
	p := strings.Split(s, "-")
	if len(p) != 3 || len(p[0]) < 2 || len(p[0]) > 7 || len(p[1]) != 2 || len(p[2]) != 1 {
		return false
	}
	for _, part := range p {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// CheckCAS returns s, a CAS registry number, when its check digit is right: the sum of the other digits, each times its
// position counted from the right, modulo 10. A wrong check digit is a
// *CASError.
func CheckCAS(s string) (string, error) {
	if !looksLikeCAS(s) {
		return "", fmt.Errorf("%q is not a CAS number (digits-dd-d)", s)
	}
	digits := strings.ReplaceAll(s[:len(s)-2], "-", "")
	sum := 0
	for i := 0; i < len(digits); i++ {
		sum += int(digits[len(digits)-1-i]-'0') * (i + 1)
	}
	check := int(s[len(s)-1] - '0')
	if sum%10 != check {
		return "", &CASError{CAS: s, Expected: sum % 10}
	}
	return s, nil
}

// isDTXSID reports whether s is a DSSTox substance id (DTXSID then digits),
// in any letter case.
func isDTXSID(s string) bool {
	if len(s) < 7 || len(s) > 20 || !strings.EqualFold(s[:6], "DTXSID") {
		return false
	}
	for i := 6; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isInChIKey reports whether s has the shape of a standard InChIKey:
// 14 letters, a hyphen, 10 letters, a hyphen, one letter (upper case).
func isInChIKey(s string) bool {
	if len(s) != 27 || s[14] != '-' || s[25] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 14 || i == 25 {
			continue
		}
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// Classify says what q names. A CAS number with a wrong check digit is
// still KindCAS (CheckCAS refuses it); text that is neither an identifier
// nor parses as SMILES is a name.
func Classify(q string) Kind {
	switch {
	case looksLikeCAS(q):
		return KindCAS
	case isDTXSID(q):
		return KindDTXSID
	case isInChIKey(strings.ToUpper(q)) && strings.ToUpper(q) == q:
		return KindInChIKey
	}
	return KindName
}

// normName is the form names are compared in: lower case, inner white
// space collapsed to one blank.
func normName(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
