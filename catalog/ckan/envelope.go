package ckan

import (
	"net/url"
	"strings"
)

// Content types of action replies.
const (
	ContentTypeJSON  = "application/json;charset=utf-8"
	ContentTypeJSONP = "application/javascript;charset=utf-8"
	ContentTypeHTML  = "text/html; charset=utf-8"
)

// Response is a finished action reply.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// ContentType is the Content-Type header value.
	ContentType string
	// Body is the reply body.
	Body []byte
}

// HelpURL is the "help" member: <site_url>/api/3/action/help_show?name=<action>.
func HelpURL(siteURL, action string) string {
	return strings.TrimSuffix(siteURL, "/") + "/api/3/action/help_show?name=" + url.QueryEscape(action)
}

type successEnvelope struct {
	Help    string `json:"help"`
	Success bool   `json:"success"`
	Result  any    `json:"result"`
}

type errorEnvelope struct {
	Help    string         `json:"help"`
	Error   map[string]any `json:"error"`
	Success bool           `json:"success"`
}

// Success renders {"help", "success": true, "result"} with status 200.
func Success(siteURL, action string, result any) Response {
	var parts RawJSONParts
	switch r := result.(type) {
	case RawJSON:
		if len(r) > 0 {
			parts = RawJSONParts{r}
		}
	case RawJSONParts:
		if r.Len() > 0 {
			parts = r
		}
	}
	if parts != nil {
		help := HelpURL(siteURL, action)
		body := make([]byte, 0, parts.Len()+len(help)+48)
		body = append(body, `{"help": `...)
		body = AppendString(body, help)
		body = append(body, `, "success": true, "result": `...)
		body = parts.join(body)
		return Response{Status: 200, ContentType: ContentTypeJSON, Body: append(body, '}')}
	}
	body, err := Marshal(successEnvelope{Help: HelpURL(siteURL, action), Success: true, Result: result})
	if err != nil {
		return Failure(siteURL, action, Internal())
	}
	return Response{Status: 200, ContentType: ContentTypeJSON, Body: body}
}

// Failure renders err: a bare JSON string for bad requests, an HTML page for
// 415, otherwise {"help", "error", "success": false} with err's status.
func Failure(siteURL, action string, err *Error) Response {
	if err.Bare {
		if err.Status == 415 {
			return Response{Status: 415, ContentType: ContentTypeHTML, Body: []byte("<!doctype html>\n<html lang=en>\n<title>415 Unsupported Media Type</title>\n<h1>Unsupported Media Type</h1>\n<p>Did not attempt to load JSON data because the request Content-Type was not &#39;application/json&#39;.</p>\n")}
		}
		body, _ := Marshal(err.Message)
		return Response{Status: err.Status, ContentType: ContentTypeJSON, Body: body}
	}
	body, mErr := Marshal(errorEnvelope{Help: HelpURL(siteURL, action), Error: err.Object()})
	if mErr != nil {
		body = []byte(`{"help": "", "error": {"__type": "Internal Server Error", "message": "Internal Server Error"}, "success": false}`)
		return Response{Status: 500, ContentType: ContentTypeJSON, Body: body}
	}
	return Response{Status: err.Status, ContentType: ContentTypeJSON, Body: body}
}

// Call runs one action on a parsed data dict. asAnonymous is true when CKAN
// would run it without the caller's identity (JSONP "callback" requests).
type Call func(data map[string]any, asAnonymous bool) (any, error)

// Serve handles one action request the CKAN way: POST-only actions refuse GET,
// the data dict is parsed, a "callback" key is removed and makes the call
// anonymous, the result or error is wrapped in the envelope, and a GET with
// callback in the query string and status 200 is wrapped as JSONP. A
// callback with other characters than ValidCallback allows is refused with
// CKAN's bare 400 before the action runs.
func Serve(r Request, sideEffectFree bool, call Call) Response {
	if r.Method != "POST" && !sideEffectFree {
		return Failure(r.SiteURL, r.Action, POSTRequired())
	}
	cb := jsonpCallback(r)
	if cb != "" && !ValidCallback(cb) {
		return Failure(r.SiteURL, r.Action, BadRequest("Invalid callback: only letters, digits, \"_\", \".\" and \"$\" are allowed"))
	}
	data, perr := ParseData(r, sideEffectFree)
	if perr != nil {
		return Failure(r.SiteURL, r.Action, perr)
	}
	_, anonymous := data["callback"]
	delete(data, "callback")
	result, err := call(data, anonymous)
	var resp Response
	if err != nil {
		resp = Failure(r.SiteURL, r.Action, AsError(err))
	} else {
		resp = Success(r.SiteURL, r.Action, result)
	}
	if cb != "" && resp.Status == 200 {
		body := make([]byte, 0, len(cb)+len(resp.Body)+3)
		body = append(append(append(append(body, cb...), '('), resp.Body...), ");"...)
		resp.Body, resp.ContentType = body, ContentTypeJSONP
	}
	return resp
}

// jsonpCallback is the JSONP callback of a GET request's query string ("" if
// none): only those are wrapped, as CKAN does.
func jsonpCallback(r Request) string {
	if r.Method != "GET" || r.Query == "" {
		return ""
	}
	q, err := url.ParseQuery(r.Query)
	if err != nil {
		return ""
	}
	return q.Get("callback")
}

// ValidCallback reports whether cb may name a JSONP callback: a non-empty
// run of ASCII letters, digits, "_", "." and "$" (a JavaScript identifier
// or a dotted path of them), so that the reply is a single function call
// whatever the caller sends. Replies wrapped as JSONP also carry
// X-Content-Type-Options: nosniff (set by the gateway on every action reply).
func ValidCallback(cb string) bool {
	if cb == "" {
		return false
	}
	for i := 0; i < len(cb); i++ {
		c := cb[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '$':
		default:
			return false
		}
	}
	return true
}
