package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"toxgate/catalog/ckan"
)

// jsonMember decodes the JSON object raw and returns its member key,
// re-encoded.
func jsonMember(raw ckan.RawJSON, key string) (ckan.RawJSON, bool, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, false, fmt.Errorf("decode activity data: %w", err)
	}
	v, ok := obj[key]
	if !ok {
		return nil, false, nil
	}
	var any any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&any); err != nil {
		return nil, false, fmt.Errorf("decode activity data: %w", err)
	}
	b, err := ckan.Marshal(any)
	return b, err == nil, err
}

// pythonIndent encodes the JSON raw as Python's json.dumps(obj, indent=2,
// sort_keys=True) does, split into lines.
func pythonIndent(raw ckan.RawJSON) ([]string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode activity data: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode activity data: %w", err)
	}
	out := make([]byte, 0, buf.Len())
	for b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}); len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch {
		case r < utf8.RuneSelf:
			out = append(out, byte(r))
		case r > 0xFFFF:
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return strings.Split(string(out), "\n"), nil
}

// unifiedRange and contextRange are difflib's _format_range_unified and
// _format_range_context.
func unifiedRange(start, stop int) string {
	beginning, length := start+1, stop-start
	if length == 1 {
		return strconv.Itoa(beginning)
	}
	if length == 0 {
		beginning--
	}
	return fmt.Sprintf("%d,%d", beginning, length)
}

func contextRange(start, stop int) string {
	beginning, length := start+1, stop-start
	if length == 0 {
		beginning--
	}
	if length <= 1 {
		return strconv.Itoa(beginning)
	}
	return fmt.Sprintf("%d,%d", beginning, beginning+length-1)
}

// unifiedDiff is "\n".join(difflib.unified_diff(a, b)) for lines without
// line ends, as CKAN's activity_diff builds it (the header lines keep
// difflib's "\n", so they are followed by an empty line).
func unifiedDiff(a, b []string) string {
	var out []string
	for i, group := range difflib.NewMatcher(a, b).GetGroupedOpCodes(3) {
		if i == 0 {
			out = append(out, "--- \n", "+++ \n")
		}
		first, last := group[0], group[len(group)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@\n", unifiedRange(first.I1, last.I2), unifiedRange(first.J1, last.J2)))
		for _, op := range group {
			if op.Tag == 'e' {
				for _, l := range a[op.I1:op.I2] {
					out = append(out, " "+l)
				}
				continue
			}
			if op.Tag == 'r' || op.Tag == 'd' {
				for _, l := range a[op.I1:op.I2] {
					out = append(out, "-"+l)
				}
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				for _, l := range b[op.J1:op.J2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// contextDiff is "\n".join(difflib.context_diff(a, b)).
func contextDiff(a, b []string) string {
	prefix := map[byte]string{'i': "+ ", 'd': "- ", 'r': "! ", 'e': "  "}
	var out []string
	for i, group := range difflib.NewMatcher(a, b).GetGroupedOpCodes(3) {
		if i == 0 {
			out = append(out, "*** \n", "--- \n")
		}
		first, last := group[0], group[len(group)-1]
		out = append(out, "***************\n", fmt.Sprintf("*** %s ****\n", contextRange(first.I1, last.I2)))
		has := func(tags string) bool {
			for _, op := range group {
				if strings.IndexByte(tags, op.Tag) >= 0 {
					return true
				}
			}
			return false
		}
		if has("rd") {
			for _, op := range group {
				if op.Tag != 'i' {
					for _, l := range a[op.I1:op.I2] {
						out = append(out, prefix[op.Tag]+l)
					}
				}
			}
		}
		out = append(out, fmt.Sprintf("--- %s ----\n", contextRange(first.J1, last.J2)))
		if has("ri") {
			for _, op := range group {
				if op.Tag != 'd' {
					for _, l := range b[op.J1:op.J2] {
						out = append(out, prefix[op.Tag]+l)
					}
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

var wrap70 = regexp.MustCompile(`.{1,70}(?:\s+|$)`)

// htmlDiff is a side-by-side table in the layout of difflib's
// HtmlDiff().make_table (table class "diff", changed lines in
// diff_add/diff_chg/diff_sub spans), of lines word-wrapped at 70
// characters as CKAN does; it leaves out HtmlDiff's navigation links and
// in-line character marks.
func htmlDiff(a, b []string) string {
	wrap := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, wrap70.FindAllString(l, -1)...)
		}
		return out
	}
	a, b = wrap(a), wrap(b)
	var sb strings.Builder
	sb.WriteString("\n    <table class=\"diff\" summary=\"Legends\">\n\n")
	sb.WriteString("        <colgroup></colgroup> <colgroup></colgroup> <colgroup></colgroup>\n")
	sb.WriteString("        <colgroup></colgroup> <colgroup></colgroup> <colgroup></colgroup>\n        <tbody>\n")
	cell := func(n int, line, class string) string {
		if n < 0 {
			return `<td class="diff_next"></td><td class="diff_header"></td><td nowrap="nowrap"></td>`
		}
		text := strings.ReplaceAll(html.EscapeString(line), " ", "&nbsp;")
		if class != "" {
			text = `<span class="` + class + `">` + text + `</span>`
		}
		return fmt.Sprintf(`<td class="diff_next"></td><td class="diff_header">%d</td><td nowrap="nowrap">%s</td>`, n+1, text)
	}
	groups := difflib.NewMatcher(a, b).GetGroupedOpCodes(5)
	if len(groups) == 0 {
		sb.WriteString("            <tr><td class=\"diff_next\"></td><td class=\"diff_header\"></td><td nowrap=\"nowrap\">No Differences Found</td></tr>\n")
	}
	for gi, group := range groups {
		if gi > 0 {
			sb.WriteString("        </tbody>        \n        <tbody>\n")
		}
		for _, op := range group {
			n := max(op.I2-op.I1, op.J2-op.J1)
			for k := 0; k < n; k++ {
				i, j := op.I1+k, op.J1+k
				left, right := -1, -1
				var ll, rl string
				if i < op.I2 {
					left, ll = i, a[i]
				}
				if j < op.J2 {
					right, rl = j, b[j]
				}
				lc, rc := "", ""
				switch op.Tag {
				case 'r':
					lc, rc = "diff_chg", "diff_chg"
				case 'd':
					lc = "diff_sub"
				case 'i':
					rc = "diff_add"
				}
				sb.WriteString("            <tr>" + cell(left, ll, lc) + cell(right, rl, rc) + "</tr>\n")
			}
		}
	}
	sb.WriteString("        </tbody>\n    </table>")
	return sb.String()
}

func activityDiff(ctx context.Context, s *Service, r *Request) (any, error) {
	if id, _ := str(r.Data["id"]); id == "" {
		return nil, ckan.FieldError("id", ckan.MsgMissing)
	}
	objectType, _ := str(r.Data["object_type"])
	if objectType == "" {
		return nil, ckan.FieldError("object_type", ckan.MsgMissing)
	}
	diffType, _ := str(r.Data["diff_type"])
	if diffType == "" {
		diffType = "unified"
	}
	m, err := s.activityByID(ctx, r)
	if err != nil {
		return nil, err
	}
	// the latest earlier activity of the same object
	var prev *activityMeta
	s.st.view(func() {
		s.acts.mu.RLock()
		for i := len(s.acts.list) - 1; i >= 0; i-- {
			p := s.acts.list[i]
			if p.ObjectID == m.ObjectID && olderActivity(p, m) && s.acts.visible(s.st, p) {
				prev = p
				break
			}
		}
		s.acts.mu.RUnlock()
	})
	if prev == nil {
		return nil, ckan.NotFound("Previous activity for this object not found")
	}
	acts, err := s.renderActivities(ctx, []*activityMeta{prev, m})
	if err != nil {
		return nil, err
	}
	var lines [2][]string
	for i, a := range acts {
		obj, ok, err := jsonMember(a.Data, objectType)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ckan.NotFound("Could not find object in the activity data")
		}
		if lines[i], err = pythonIndent(obj); err != nil {
			return nil, err
		}
	}
	var diff string
	switch diffType {
	case "unified":
		diff = unifiedDiff(lines[0], lines[1])
	case "context":
		diff = contextDiff(lines[0], lines[1])
	case "html":
		diff = htmlDiff(lines[0], lines[1])
	default:
		return nil, ckan.ValidationMessage("diff_type not recognized")
	}
	return map[string]any{"diff": diff, "activities": acts}, nil
}
