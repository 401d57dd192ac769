package web

import (
	"bytes"
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// md renders Markdown with GitHub's tables, strikethrough and autolinks.
// Raw HTML in the source is dropped (goldmark's default without
// html.WithUnsafe); what it renders then passes markdownPolicy.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify))

// markdownPolicy is the sanitizer every rendered description passes: the
// elements and attributes of user-generated content (bluemonday's UGC
// policy: no script, style, event handler or form), links and images only
// with an http, https or mailto scheme or relative, judged on the value a
// browser sees (entities decoded, unparseable URLs dropped; no data:
// images), links marked rel="nofollow noreferrer". The page's
// Content-Security-Policy is the second line.
var markdownPolicy = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(true)
	p.RequireParseableURLs(true)
	p.RequireNoReferrerOnLinks(true)
	return p
}()

// markdown renders user-written Markdown (a dataset description, a model
// card) to safe HTML.
func markdown(src string) template.HTML {
	if src == "" {
		return ""
	}
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(markdownPolicy.SanitizeBytes(buf.Bytes())) //nolint:gosec // sanitized by markdownPolicy
}

var tags = regexp.MustCompile(`<[^>]*>`)

// plainText is Markdown as plain text (for a search result's excerpt, as
// CKAN's markdown_extract): rendered, then stripped of tags.
func plainText(src string) string {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return src
	}
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(buf.String(), " "))), " ")
}
