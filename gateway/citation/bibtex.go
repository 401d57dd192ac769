package citation

import (
	"strconv"
	"strings"
)

// BibTeX renders w as one @misc entry (BibTeX's entry for a dataset; the
// year, publisher, version, DOI and URL fields are read by biblatex and by
// reference managers). Values are escaped so that no input can end a field
// or run a command: braces, backslashes and TeX's special characters are
// written as their TeX forms.
func BibTeX(w Work) []byte {
	var b strings.Builder
	b.WriteString("@misc{" + w.Key + ",\n")
	field := func(name, value string) {
		if value == "" {
			return
		}
		b.WriteString("  " + name + " = {" + value + "},\n")
	}
	var authors []string
	for _, c := range w.Creators {
		switch {
		case c.Organization || c.Family == "":
			authors = append(authors, "{"+texEscape(c.Name)+"}") // kept whole: BibTeX would split it
		default:
			authors = append(authors, texEscape(c.Family)+", "+texEscape(c.Given))
		}
	}
	field("author", strings.Join(authors, " and "))
	field("title", "{"+texEscape(w.Title)+"}")
	field("year", strconv.Itoa(w.Issued.Year()))
	field("month", strings.ToLower(w.Issued.Month().String()[:3]))
	field("publisher", texEscape(w.Publisher))
	field("version", texEscape(w.Version))
	if w.DOI != "" {
		field("doi", texEscape(w.DOI))
	}
	field("url", texEscape(w.URL))
	field("note", "Dataset")
	if len(w.Keywords) > 0 {
		field("keywords", texEscape(strings.Join(w.Keywords, ", ")))
	}
	b.WriteString("}\n")
	return []byte(b.String())
}

// texEscape writes s so that it is plain text inside a braced BibTeX field.
func texEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\textbackslash{}`)
		case '{', '}', '&', '%', '$', '#', '_':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '~':
			b.WriteString(`\textasciitilde{}`)
		case '^':
			b.WriteString(`\textasciicircum{}`)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			if r < 0x20 {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
