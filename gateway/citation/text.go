package citation

import (
	"strings"
)

// Text renders w as a reference in the style data repositories print on
// a dataset's page (DataCite's recommended form, as Zenodo shows it):
// Creators (Year). Title (Version v) [Data set]. Publisher. DOI or URL.
func Text(w Work) string {
	var b strings.Builder
	var names []string
	for _, c := range w.Creators {
		if c.Organization || c.Family == "" {
			names = append(names, c.Name)
			continue
		}
		names = append(names, c.Family+", "+initials(c.Given))
	}
	if len(names) > 0 {
		b.WriteString(strings.Join(names, "; ") + " ")
	}
	b.WriteString("(" + w.Issued.Format("2006") + "). ")
	b.WriteString(strings.TrimRight(w.Title, "."))
	if w.Version != "" {
		b.WriteString(" (Version " + w.Version + ")")
	}
	b.WriteString(" [Data set]. " + strings.TrimRight(w.Publisher, ".") + ". ")
	if w.DOI != "" {
		b.WriteString("https://doi.org/" + w.DOI)
	} else {
		b.WriteString(w.URL)
	}
	return b.String()
}

// initials turns "Ana Maria" into "A. M.".
func initials(given string) string {
	var parts []string
	for _, f := range strings.Fields(given) {
		r := []rune(f)
		parts = append(parts, string(r[0])+".")
	}
	return strings.Join(parts, " ")
}
