package web

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	xhtml "golang.org/x/net/html"
)

// hostileMarkdown are descriptions that try to smuggle a script URL, an
// event handler or a style into a page: autolinks, entity-encoded and
// angle-bracketed destinations, images, raw HTML, reference links.
var hostileMarkdown = []string{
	"<javascript:alert(6)>",
	"[h](&#106;avascript:alert(9))",
	"[k](<javascript&colon;alert(12)>)",
	"[a](JaVaScRiPt:alert(1))",
	"[a](java&#x09;script:alert(1))",
	"[a](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1))",
	"[a](vbscript:msgbox(1))",
	"[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
	"![i](javascript:alert(1))",
	"![i](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)",
	"![i](&#106;avascript:alert(1))",
	"[r][1]\n\n[1]: javascript:alert(1)",
	"[r][1]\n\n[1]: <&#106;avascript&colon;alert(1)>",
	"<a href=\"javascript:alert(1)\" onclick=\"alert(2)\" style=\"color:red\">x</a>",
	"<img src=x onerror=alert(1)>",
	"<script>alert(1)</script>",
	"www.example.org/x\" onmouseover=\"alert(1)",
	"[a](https://example.org \"t\\\" onmouseover=alert(1) x=\\\"\")",
}

// The findings' descriptions render without a script link, and ordinary
// Markdown keeps its links, images and structure.
func TestMarkdownDropsDangerousLinks(t *testing.T) {
	for _, src := range hostileMarkdown {
		out := string(markdown(src))
		if msg := unsafeMarkup(out); msg != "" {
			t.Errorf("%q rendered %q: %s", src, out, msg)
		}
	}
	keep := map[string]string{
		"[d](/dataset/a)":              `href="/dataset/a"`,
		"[s](https://example.org/x?y)": `href="https://example.org/x?y"`,
		"[m](mailto:a@example.org)":    `href="mailto:a@example.org"`,
		"<https://example.org>":        `href="https://example.org"`,
		"![p](/static/p.png)":          `src="/static/p.png"`,
		"![p](https://example.org/p)":  `src="https://example.org/p"`,
		"[f](#section)":                `href="#section"`,
		"[r](../other)":                `href="../other"`,
		"| a |\n|---|\n| 1 |":          "<td>1</td>",
		"**b** ~~s~~ `c`":              "<strong>b</strong> <del>s</del> <code>c</code>",
	}
	for src, want := range keep {
		if out := string(markdown(src)); !strings.Contains(out, want) {
			t.Errorf("%q rendered %q, want it to contain %q", src, out, want)
		}
	}
}

// FuzzMarkdown: whatever the description, the rendered HTML has no element
// of script or style, no event handler or style attribute, and every URL
// attribute is relative or http, https or mailto as a browser reads it.
func FuzzMarkdown(f *testing.F) {
	for _, s := range hostileMarkdown {
		f.Add(s)
	}
	f.Add("# t\n\n- [a](/x)\n- <https://e.org>\n\n![i](p.png)")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		out := string(markdown(src))
		if msg := unsafeMarkup(out); msg != "" {
			t.Fatalf("%q rendered %q: %s", src, out, msg)
		}
	})
}

// urlAttrs are attributes a browser follows or loads as a URL.
var urlAttrs = map[string]bool{"href": true, "src": true, "action": true, "formaction": true, "xlink:href": true,
	"srcset": true, "poster": true, "background": true, "cite": true, "data": true, "longdesc": true, "usemap": true}

// unsafeMarkup tokenizes out as a browser would and names the first
// element or attribute that could run script or load another scheme.
func unsafeMarkup(out string) string {
	z := xhtml.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return ""
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script", "style", "iframe", "object", "embed", "form", "base", "meta", "link", "svg", "math":
				return "element " + tok.Data
			}
			for _, a := range tok.Attr {
				key := strings.ToLower(a.Key)
				if strings.HasPrefix(key, "on") || key == "style" {
					return "attribute " + key
				}
				if urlAttrs[key] && !safeURL(a.Val) {
					return "URL " + key + "=" + a.Val
				}
			}
		}
	}
}

// safeURL reports whether a URL attribute's value is relative or has an
// allowed scheme as a browser reads it: entities decoded (once, by the
// tokenizer, as a browser does), case folded, control characters and
// white space dropped.
func safeURL(v string) bool {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, v)
	i := strings.IndexAny(v, ":/?#")
	if i < 0 || v[i] != ':' || !schemeRE.MatchString(v[:i]) {
		return true // relative: no scheme before the path, query or fragment
	}
	switch v[:i] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// schemeRE is a URL scheme (RFC 3986: a letter, then letters, digits, "+",
// "-", "."); what precedes a ":" otherwise makes a relative path.
var schemeRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)
