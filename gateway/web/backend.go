package web

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
)

// Backend is what the catalog and model pages call in the gateway besides
// the catalog's actions (Options.Catalog). Every call carries the page
// user's identity, so the pages see and do exactly what the API allows
// that user: they never read the store themselves.
type Backend interface {
	// Upload serves a multipart resource action (resource_create,
	// resource_update) whose body is still unread, streaming the "upload"
	// field into the file store; the CKAN answer is left in ctx.Response.
	Upload(ctx *fasthttp.RequestCtx, action string, caller identity.Caller)
	// Attach runs a resource action whose urlencoded fields body name the
	// finished resumable upload ref (its upload_id, not in body); the CKAN
	// answer is left in ctx.Response.
	Attach(ctx *fasthttp.RequestCtx, action string, caller identity.Caller, body []byte, ref string)
	// Get serves GET path in-process through the gateway's own routes with
	// the given request headers (the page's cookie, a Range) into resp.
	Get(path string, header map[string]string, resp *fasthttp.Response)
	// Model returns the index entry of a loaded model.
	Model(name string) (ModelInfo, bool)
	// RunModel posts a JSON body to a model path through the module host
	// as caller (anonymous: the client at remoteIP, when models are open)
	// and returns the answer's status, content type and body.
	RunModel(path string, body []byte, accept string, caller identity.Caller, remoteIP string) (status int, contentType string, out []byte)
}

// ModelInfo is what a model page shows of a model (from the model index).
type ModelInfo struct {
	Name, Version, Title, Description, SHA256 string
	Card                                      ModelCard
	Routes                                    []ModelRoute
}

// ModelCard is a model's card (fields hold Markdown).
type ModelCard struct {
	Summary, IntendedUse, Data, Method, Validation, Limitations, License string
	Units                                                                map[string]string
	References, Authors                                                  []string
}

// ModelRoute is one endpoint of a model.
type ModelRoute struct {
	Path, Summary string
	InputSchema   json.RawMessage
	Example       json.RawMessage
	// Table is the output member that holds a table of rows (classifier
	// predictions), if any.
	Table string
}

// call runs a catalog action as the page's user and decodes its result
// into out; a failed action returns *catalogclient.Error.
func (w *Web) call(r *req, action string, args any, out any) error {
	if w.o.Catalog == nil {
		return errors.New("the catalog is not attached")
	}
	// The plugin host bounds the call; a shutdown lets it finish.
	return w.o.Catalog.At(w.baseURL(r.ctx)).Do(context.WithoutCancel(r.ctx), r.catalogCaller().Identity, action, args, out)
}

// catalogCaller is the identity the catalog pages act with: the session's
// user once the first login is done, else anonymous (as for downloads).
func (r *req) catalogCaller() identity.Caller {
	if r.user == nil || r.sess == nil || !r.user.FirstLoginDone() || r.user.State != identity.StateActive {
		return identity.Caller{}
	}
	return r.user.Caller("session")
}
