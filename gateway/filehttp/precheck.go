package filehttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"toxgate/catalog/ckan"
	"toxgate/gateway/pluginhost"
)

// targetField is the form field naming what an upload action writes to: the
// dataset of resource_create, the resource of resource_update and
// resource_patch.
func targetField(action string) string {
	if action == "resource_create" {
		return "package_id"
	}
	return "id"
}

// mayWrite asks the catalog whether caller may write the upload of action
// whose fields (those sent before the file) are form: the dataset of
// resource_create (package_id), the dataset of the resource of
// resource_update and resource_patch (id). It is the catalog's own answer
// (package_writable, the rights resource_create and resource_update check)
// with the upload action's name; nil when the file may be read. The action
// itself checks again when it runs.
func (h *Handler) mayWrite(ctx context.Context, site, action string, caller pluginhost.Identity, form url.Values) *ckan.Error {
	field := targetField(action)
	vals := form[field]
	switch {
	case len(vals) == 0 || vals[0] == "":
		return ckan.FieldError(field, ckan.MsgMissing+": send "+field+" before the upload field (the file is read only once the catalog allows it)")
	case len(vals) > 1:
		return ckan.FieldError(field, "Give one value")
	}
	pkg := vals[0]
	if field == "id" {
		res, e := h.internal(ctx, site, "resource_show", caller, map[string]any{"id": vals[0]})
		if e != nil {
			return e
		}
		pkg, _ = res["package_id"].(string)
	}
	_, e := h.internal(ctx, site, "package_writable", caller, map[string]any{"id": pkg})
	return e
}

// MayWriteDataset asks the catalog whether caller may write to the dataset
// pkg (package_writable); nil when allowed, else the catalog's refusal.
func (h *Handler) MayWriteDataset(ctx context.Context, site string, caller pluginhost.Identity, pkg string) *ckan.Error {
	_, e := h.internal(ctx, site, "package_writable", caller, map[string]any{"id": pkg})
	return e
}

// internal runs a catalog action as caller and returns its result, or its
// refusal as the CKAN error it answered.
func (h *Handler) internal(ctx context.Context, site, action string, caller pluginhost.Identity, data map[string]any) (map[string]any, *ckan.Error) {
	body, err := json.Marshal(data)
	if err != nil {
		return nil, ckan.Internal()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), precheckTimeout)
	defer cancel()
	resp, err := h.plugins.CallInternalContext(cctx, action, site, caller, body)
	if err != nil {
		return nil, &ckan.Error{Status: http.StatusServiceUnavailable, Type: pluginhost.TypeUnavailable,
			Message: "The catalog is unavailable; please retry (" + err.Error() + ")"}
	}
	var env struct {
		Success bool           `json:"success"`
		Result  map[string]any `json:"result"`
		Error   map[string]any `json:"error"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		return nil, &ckan.Error{Status: http.StatusBadGateway, Type: ckan.TypeInternal, Message: "The catalog's answer to " + action + " is not JSON"}
	}
	if resp.Status == http.StatusOK && env.Success {
		return env.Result, nil
	}
	return nil, refusal(resp.Status, env.Error)
}

// refusal rebuilds the CKAN error of an action's "error" member.
func refusal(status int, obj map[string]any) *ckan.Error {
	e := &ckan.Error{Status: status}
	if status < 400 {
		e.Status = http.StatusBadGateway
	}
	for k, v := range obj {
		switch k {
		case "__type":
			e.Type, _ = v.(string)
		case "message":
			e.Message, _ = v.(string)
		default:
			if e.Fields == nil {
				e.Fields = map[string]any{}
			}
			e.Fields[k] = v
		}
	}
	if e.Type == "" {
		e.Type = ckan.TypeInternal
	}
	return e
}
