package citation

import (
	"strings"
)

// RIS renders w as one RIS record of type DATA (dataset), as Zenodo and
// Dataverse export it: AU per creator, TI, PY and DA, PB, ET (the
// version), DO, UR, AB, KW per keyword, ER. Line breaks inside a value
// become spaces, so a value cannot start a tag of its own.
func RIS(w Work) []byte {
	var b strings.Builder
	tag := func(t, v string) {
		v = risValue(v)
		if v == "" {
			return
		}
		b.WriteString(t + "  - " + v + "\r\n")
	}
	tag("TY", "DATA")
	for _, c := range w.Creators {
		tag("AU", c.Name)
	}
	tag("TI", w.Title)
	tag("PY", w.Issued.Format("2006"))
	tag("DA", w.Issued.Format("2006/01/02"))
	tag("PB", w.Publisher)
	tag("ET", w.Version)
	tag("DO", w.DOI)
	tag("UR", w.URL)
	tag("AB", w.Description)
	for _, k := range w.Keywords {
		tag("KW", k)
	}
	b.WriteString("ER  - \r\n")
	return []byte(b.String())
}

func risValue(s string) string {
	return strings.TrimSpace(strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x85 || r == 0x2028 || r == 0x2029
	}), " "))
}
