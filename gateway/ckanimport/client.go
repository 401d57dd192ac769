package ckanimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"toxgate/internal/egress"
)

// client calls one CKAN site's action API.
type client struct {
	base, token string
	http        *http.Client
	callTimeout time.Duration
	idle        time.Duration // downloads: longest silence of the server
	maxBytes    int64         // downloads: largest file
}

// APIError is an action that did not succeed.
type APIError struct {
	Action  string
	Status  int
	Type    string
	Message string
	Detail  map[string]any
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" && len(e.Detail) > 0 {
		b, _ := json.Marshal(e.Detail)
		msg = string(b)
	}
	if msg == "" {
		msg = e.Type
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Action, e.Status, msg)
}

// notFound reports a CKAN "Not found" answer.
func notFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// unknownAction reports that a site does not offer an action (CKAN answers
// 400 "Action name not known", toxgate 404 or 400 as well).
func unknownAction(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	m := strings.ToLower(e.Message + " " + e.Type)
	return (e.Status == http.StatusBadRequest || e.Status == http.StatusNotFound) &&
		(strings.Contains(m, "action name not known") || strings.Contains(m, "unknown action") || strings.Contains(m, "no action"))
}

// call posts args as JSON to action and decodes the result into out.
func (c *client) call(ctx context.Context, action string, args map[string]any, out any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/3/action/"+action, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, action, out)
}

func (c *client) do(req *http.Request, action string, out any) error {
	if c.token != "" {
		req.Header.Set("Authorization", c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s at %s: %w", action, c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("%s at %s: read the answer: %w", action, c.base, err)
	}
	var env struct {
		Success bool            `json:"success"`
		Result  json.RawMessage `json:"result"`
		Error   map[string]any  `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		msg := strings.TrimSpace(string(raw))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return &APIError{Action: action, Status: resp.StatusCode, Message: "not a CKAN answer: " + msg}
	}
	if !env.Success {
		e := &APIError{Action: action, Status: resp.StatusCode, Detail: map[string]any{}}
		for k, v := range env.Error {
			switch k {
			case "__type":
				e.Type, _ = v.(string)
			case "message":
				e.Message, _ = v.(string)
			default:
				e.Detail[k] = v
			}
		}
		if e.Status == http.StatusOK {
			e.Status = http.StatusBadRequest
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("%s at %s: decode the result: %w", action, c.base, err)
	}
	return nil
}

// upload sends a multipart action with fields and the file at path as the
// "upload" field, streamed from disk.
func (c *client) upload(ctx context.Context, action string, fields map[string]string, fileName, path string, out any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			for k, v := range fields {
				if err := mw.WriteField(k, v); err != nil {
					return err
				}
			}
			fw, err := mw.CreateFormFile("upload", fileName)
			if err != nil {
				return err
			}
			if _, err := io.Copy(fw, f); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/3/action/"+action, pr)
	if err != nil {
		pr.Close()
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.do(req, action, out)
}

// download streams url into w through the client's egress policy, within
// its idle timeout and size limit.
func (c *client) download(ctx context.Context, url string, w io.Writer) (int64, error) {
	h := http.Header{}
	// The source's token goes only to the source's own host.
	base, berr := neturl.Parse(c.base)
	u, uerr := neturl.Parse(url)
	if c.token != "" && berr == nil && uerr == nil && strings.EqualFold(base.Host, u.Host) {
		h.Set("Authorization", c.token)
	}
	body, err := egress.Get(ctx, c.http, url, egress.FetchOptions{IdleTimeout: c.idle, Header: h})
	if err != nil {
		return 0, fmt.Errorf("download: %w", err)
	}
	defer body.Close()
	n, err := io.Copy(w, io.LimitReader(body, c.maxBytes+1))
	if err != nil {
		return n, fmt.Errorf("download: %w", err)
	}
	if n > c.maxBytes {
		return n, fmt.Errorf("download %s: the file is larger than %d bytes", u.Redacted(), c.maxBytes)
	}
	return n, nil
}
