// Package catalogclient is the gateway's one client of the catalog
// plugin: the web pages, the DCAT endpoints, the scoring jobs, the models'
// catalog entries and the file downloads run catalog actions through it,
// as a caller, and read CKAN's {success, result, error} envelope in one
// place. A refused or failed action is an *Error with the answer's status
// and CKAN's error type, message and field errors.
package catalogclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"toxgate/plugins/contract"
)

// Caller is who an action runs as: the identity the gateway authenticated
// (the zero value is the anonymous caller). It is the one caller type of
// the gateway's catalog calls.
type Caller = contract.Identity

// Plugins runs one action in the plugin that serves it (the gateway's
// plugin host, gateway/pluginhost).
type Plugins interface {
	// CallContext runs action as caller with body of contentType and an
	// optional stored file, within ctx, and returns the plugin's answer.
	CallContext(ctx context.Context, action, siteURL string, caller contract.Identity, contentType string, body []byte, upload *contract.Upload) (*contract.Response, error)
}

// Client runs catalog actions. The zero value is not usable; make one
// with New. A Client is safe for concurrent use.
type Client struct {
	plugins Plugins
	siteURL string
}

// New returns a client of plugins whose answers carry siteURL (the
// gateway's public URL).
func New(plugins Plugins, siteURL string) *Client {
	return &Client{plugins: plugins, siteURL: siteURL}
}

// At returns a client whose answers carry siteURL instead (a page's own
// base URL).
func (c *Client) At(siteURL string) *Client {
	return &Client{plugins: c.plugins, siteURL: siteURL}
}

// SiteURL is the public URL the client's answers carry.
func (c *Client) SiteURL() string { return c.siteURL }

// Do runs action as caller with args as its JSON body (args of type
// []byte or json.RawMessage are sent as they are) and decodes the
// result into out (nil: the result is dropped). A refused or failed
// action returns an *Error.
func (c *Client) Do(ctx context.Context, caller Caller, action string, args, out any) error {
	return c.Attach(ctx, caller, action, args, nil, out)
}

// Attach is Do with a file the gateway has stored (see catalog/filestore)
// attached, as a resource action's upload.
func (c *Client) Attach(ctx context.Context, caller Caller, action string, args any, upload *contract.Upload, out any) error {
	var body []byte
	switch a := args.(type) {
	case []byte:
		body = a
	case json.RawMessage:
		body = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return fmt.Errorf("%s: encode arguments: %w", action, err)
		}
		body = b
	}
	resp, err := c.plugins.CallContext(ctx, action, c.siteURL, caller, "application/json", body, upload)
	if err != nil {
		return &Error{Action: action, Status: http.StatusServiceUnavailable, Type: TypeUnavailable,
			Message: "The catalog is temporarily unavailable; please retry.", Err: err}
	}
	if err := Decode(resp.Status, resp.Body, out); err != nil {
		if e, ok := err.(*Error); ok {
			e.Action = action
		}
		return err
	}
	return nil
}
