package ckan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Request is an action request as it came over HTTP, reduced to what CKAN's
// request handling looks at.
type Request struct {
	// Action is the action name from the path.
	Action string
	// Method is the HTTP method, e.g. "GET" or "POST".
	Method string
	// ContentType is the Content-Type header value.
	ContentType string
	// Query is the raw query string (without '?').
	Query string
	// Body is the request body.
	Body []byte
	// SiteURL is the public base URL, used in the "help" member.
	SiteURL string
}

// ErrFileNotAccepted is the reply to a multipart body carrying a file where
// no file is taken: files reach the catalog only through the gateway's
// streamed upload of resource_create, resource_update and resource_patch.
var ErrFileNotAccepted = FieldError("upload", "Files are accepted only by resource_create, resource_update and resource_patch")

// maxMultipartMemory caps multipart parsing held in memory.
const maxMultipartMemory = 32 << 20

// ParseData builds the data dict as CKAN's _get_request_data does: a form body
// on a POST (a single field with value "" or "1" is JSON in its name), the
// query string for side-effect-free actions, else a JSON body (which needs
// Content-Type application/json), else {}. The returned error is a *Error
// (bare 400 string, or 415 reported with Status 415).
func ParseData(r Request, sideEffectFree bool) (map[string]any, *Error) {
	mediaType, params, _ := mime.ParseMediaType(r.ContentType)
	isForm := mediaType == "application/x-www-form-urlencoded" || mediaType == "multipart/form-data"
	if r.Method == "POST" && isForm && len(r.Body) > 0 {
		form, err := parseForm(mediaType, params, r.Body)
		if errors.Is(err, errFilePart) {
			return nil, ErrFileNotAccepted
		}
		if err != nil {
			return nil, BadRequest("JSON Error: Error decoding JSON data. Error: <BadRequest '400: Bad Request'> JSON data extracted from the request: {}")
		}
		if len(form) == 1 {
			for k, v := range form {
				if s, ok := v.(string); ok && (s == "" || s == "1") {
					return decodeObject([]byte(k))
				}
			}
		}
		if len(form) > 0 {
			return form, nil
		}
	}
	if sideEffectFree && r.Query != "" {
		values, err := url.ParseQuery(r.Query)
		if err == nil && len(values) > 0 {
			return flatten(values), nil
		}
	}
	if len(bytes.TrimSpace(r.Body)) > 0 && mediaType != "multipart/form-data" {
		if mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json") {
			return nil, &Error{Status: 415, Message: "Unsupported Media Type", Bare: true}
		}
		return decodeObject(r.Body)
	}
	return map[string]any{}, nil
}

// decodeObject parses a JSON request body that must be an object.
func decodeObject(body []byte) (map[string]any, *Error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, BadRequest("JSON Error: Error decoding JSON data. Error: <BadRequest '400: Bad Request'> JSON data extracted from the request: {}")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, BadRequest(fmt.Sprintf("JSON Error: Request data JSON decoded to %s but it needs to be a dictionary.", PyRepr(v)))
	}
	return m, nil
}

// parseForm decodes an urlencoded or multipart body into the string-or-list
// shape; a file part is refused (errFilePart).
func parseForm(mediaType string, params map[string]string, body []byte) (map[string]any, error) {
	if mediaType == "application/x-www-form-urlencoded" {
		values, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("parse form: %w", err)
		}
		return flatten(values), nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	f, err := mr.ReadForm(maxMultipartMemory)
	if err != nil {
		return nil, fmt.Errorf("parse multipart: %w", err)
	}
	defer func() { _ = f.RemoveAll() }()
	if len(f.File) > 0 {
		return nil, errFilePart
	}
	return flatten(f.Value), nil
}

// errFilePart marks a multipart body with a file in it.
var errFilePart = errors.New("multipart body carries a file")

// flatten turns repeated keys into lists and single keys into strings.
func flatten(values map[string][]string) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		if len(v) == 1 {
			out[k] = v[0]
		} else {
			list := make([]any, len(v))
			for i, s := range v {
				list[i] = s
			}
			out[k] = list
		}
	}
	return out
}

// PyRepr renders a decoded JSON value as Python's repr would, for messages
// that CKAN builds with %s of a Python object.
func PyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", `\'`) + "'"
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = PyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = PyRepr(k) + ": " + PyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprint(x)
	}
}
