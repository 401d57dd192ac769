package datastore

import "strings"

// scanStatement reads a datastore_search_sql statement as the engine's own
// lexer does (PostgreSQL's when pg, else SQLite's): strings, quoted
// identifiers and comments are skipped exactly where the engine skips them,
// so that a semicolon is a statement boundary here exactly when it is one
// there. It returns the statement without its trailing semicolon, its
// first keyword (after opening parentheses, lower case; "" when the first
// token is not a word) and whether q is exactly one statement. Anything it
// cannot read as surely as the engine (an unterminated string or comment,
// PostgreSQL's dollar quoting, a string glued to a number) is not one
// statement.
//
// The differences it follows: PostgreSQL nests block comments, ends line
// comments at CR as well as LF, counts VT as white space, reads
// backslash escapes in E'...' strings and does not quote with [...] or
// `...`; SQLite does all the opposite. PostgreSQL's
// standard_conforming_strings is set on for the statement (pgReadLimits),
// so a backslash escapes nothing in '...'.
func scanStatement(q string, pg bool) (stmt, first string, single bool) {
	return scanStatementIdents(q, pg, nil)
}

// scanStatementIdents is scanStatement that also hands each quoted
// identifier to ident (its bytes q[i:j], quotes included) when ident is
// not nil.
func scanStatementIdents(q string, pg bool, ident func(i, j int)) (stmt, first string, single bool) {
	end := -1       // the first top-level semicolon
	prev := byte(0) // the token just before: 'w' a word, 'n' a number, 0 other
	prevLen := 0    // the length of that word
	opened := false // a token other than an opening parenthesis was read
	for i := 0; i < len(q); {
		c := q[i]
		if isSQLSpace(c, pg) {
			i++
			prev = 0
			continue
		}
		// comments
		if c == '-' && i+1 < len(q) && q[i+1] == '-' {
			j := i + 2
			for j < len(q) && q[j] != '\n' && !(pg && q[j] == '\r') {
				j++
			}
			i, prev = j, 0
			continue
		}
		if c == '/' && i+1 < len(q) && q[i+1] == '*' {
			j, ok := blockCommentEnd(q, i, pg)
			if !ok {
				return "", "", false
			}
			i, prev = j, 0
			continue
		}
		if end >= 0 || c == 0 {
			return "", "", false // a token after the first statement, or a NUL the engine stops at
		}
		if c != '(' {
			if !opened && isWordStart(c) {
				j := i + 1
				for j < len(q) && isWordPart(q[j]) {
					j++
				}
				first = strings.ToLower(q[i:j])
			}
			opened = true
		}
		kind := byte(0)
		switch {
		case c == ';':
			end = i
			i++
		case c == '\'':
			if prev == 'n' {
				return "", "", false // PostgreSQL before 15 reads 1e'..' as 1 and an E string
			}
			escapes := pg && prev == 'w' && prevLen == 1 && (q[i-1] == 'e' || q[i-1] == 'E')
			j, ok := stringEnd(q, i, escapes)
			if !ok {
				return "", "", false
			}
			i = j
		case c == '"' || (!pg && (c == '`' || c == '[')):
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := strings.IndexByte(q[i+1:], closer)
			if j < 0 {
				return "", "", false
			}
			if ident != nil {
				ident(i, i+j+2)
			}
			i += j + 2
		case c == '$' && pg:
			if i+1 >= len(q) || q[i+1] < '0' || q[i+1] > '9' {
				return "", "", false // dollar quoting: refused rather than read
			}
			i++ // a parameter $n
		case !pg && (c == '$' || c == '@' || c == ':' || c == '#' || c == '?'):
			return "", "", false // SQLite's parameters, whose Tcl form $a(...) spans quotes
		case isWordStart(c):
			j := i + 1
			for j < len(q) && isWordPart(q[j]) {
				j++
			}
			kind, prevLen = 'w', j-i
			i = j
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(q) && (isWordPart(q[j]) || q[j] == '.') {
				j++
			}
			kind = 'n'
			i = j
		default:
			i++
		}
		prev = kind
	}
	if end >= 0 {
		q = q[:end]
	}
	return q, first, strings.TrimSpace(q) != ""
}

// blockCommentEnd is the index after the block comment that starts at i
// (nested on PostgreSQL); false when it does not end.
func blockCommentEnd(q string, i int, pg bool) (int, bool) {
	depth := 0
	for j := i; j+1 < len(q); {
		switch {
		case q[j] == '/' && q[j+1] == '*' && (pg || depth == 0):
			depth++
			j += 2
		case q[j] == '*' && q[j+1] == '/':
			depth--
			j += 2
			if depth == 0 {
				return j, true
			}
		default:
			j++
		}
	}
	return 0, false
}

// stringEnd is the index after the string literal that starts at i (a
// quote); escapes reads PostgreSQL's E'...' backslash escapes. A doubled
// quote is a quote inside the string.
func stringEnd(q string, i int, escapes bool) (int, bool) {
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if escapes {
				j++
			}
		case '\'':
			if j+1 < len(q) && q[j+1] == '\'' {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return 0, false
}

func isSQLSpace(c byte, pg bool) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || (pg && c == '\v')
}

// isWordStart and isWordPart are the characters of unquoted identifiers
// and keywords (bytes of multibyte UTF-8 letters included, as both engines
// take them); PostgreSQL also takes $ inside a word.
func isWordStart(c byte) bool {
	return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' || c >= 0x80
}

func isWordPart(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' || c == '$' }

// selectKeywords are the first words of a statement that only reads.
var selectKeywords = map[string]bool{"select": true, "with": true, "values": true}
