package web

import (
	"bytes"
	"html"
	"html/template"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// md renders Markdown with GitHub's tables, strikethrough and autolinks.
// Raw HTML in the source is dropped (goldmark's default without
// html.WithUnsafe) and links with dangerous schemes (javascript:, ...)
// are emptied, so the output is safe to put in a page as is.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify))

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
	return template.HTML(buf.String()) //nolint:gosec // goldmark without WithUnsafe emits no raw HTML
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
