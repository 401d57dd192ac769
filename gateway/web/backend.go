package web

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/identity"
)

// Backend is what the catalog and model pages call in the gateway. Every
// call carries the page user's identity, so the pages see and do exactly
// what the API allows that user: they never read the store themselves.
type Backend interface {
	// Action runs a catalog action of the catalog plugin as caller with a
	// JSON body and returns the HTTP status and the CKAN envelope.
	Action(siteURL, action string, caller identity.Caller, body []byte) (status int, envelope []byte, err error)
	// Upload serves a multipart resource action (resource_create,
	// resource_update) whose body is still unread, streaming the "upload"
	// field into the file store; the CKAN answer is left in ctx.Response.
	Upload(ctx *fasthttp.RequestCtx, action string, caller identity.Caller)
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

// ckanError is a catalog action that did not succeed.
type ckanError struct {
	Status  int
	Type    string
	Message string
	Fields  map[string][]string
}

func (e *ckanError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("%s (%d)", e.Type, e.Status)
}

// call runs a catalog action as the page's user and decodes its result
// into out; a failed action returns *ckanError.
func (w *Web) call(r *req, action string, args any, out any) error {
	if w.o.Backend == nil {
		return errors.New("the catalog is not attached")
	}
	body, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	status, env, err := w.o.Backend.Action(w.baseURL(r.ctx), action, r.catalogCaller(), body)
	if err != nil {
		return &ckanError{Status: fasthttp.StatusServiceUnavailable, Type: "Service Unavailable", Message: "The catalog is temporarily unavailable; please retry."}
	}
	return decodeEnvelope(status, env, out)
}

// decodeEnvelope reads CKAN's {success, result, error} envelope.
func decodeEnvelope(status int, env []byte, out any) error {
	var e struct {
		Success bool            `json:"success"`
		Result  json.RawMessage `json:"result"`
		Error   map[string]any  `json:"error"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		return &ckanError{Status: status, Type: "Error", Message: fmt.Sprintf("the catalog answered %d with no envelope", status)}
	}
	if !e.Success {
		ce := &ckanError{Status: status, Fields: map[string][]string{}}
		for k, v := range e.Error {
			switch k {
			case "__type":
				ce.Type, _ = v.(string)
			case "message":
				ce.Message, _ = v.(string)
			default:
				switch vv := v.(type) {
				case []any:
					for _, m := range vv {
						ce.Fields[k] = append(ce.Fields[k], fmt.Sprint(m))
					}
				default:
					ce.Fields[k] = append(ce.Fields[k], fmt.Sprint(vv))
				}
			}
		}
		return ce
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(e.Result, out)
}

// catalogCaller is the identity the catalog pages act with: the session's
// user once the first login is done, else anonymous (as for downloads).
func (r *req) catalogCaller() identity.Caller {
	if r.user == nil || r.sess == nil || !r.user.FirstLoginDone() || r.user.State != identity.StateActive {
		return identity.Caller{}
	}
	return r.user.Caller("session")
}
