package citation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxDataCiteReply bounds what is read of DataCite's answer.
const maxDataCiteReply = 1 << 20

// Registrar registers DOIs with DataCite's REST API (PUT /dois/{doi}:
// creates the DOI or updates its metadata, so a retry after a failure
// registers nothing twice).
type Registrar struct {
	// APIURL is DataCite's REST API (https://api.test.datacite.org).
	APIURL string
	// RepositoryID and Password authenticate the repository.
	RepositoryID, Password string
	// Prefix is the repository's DOI prefix ("10.5072").
	Prefix string
	// Timeout bounds one registration.
	Timeout time.Duration
	// HTTP is the client (the egress policy's: every outbound call goes
	// through it).
	HTTP *http.Client
}

// DOIFor is the DOI toxgate registers for a dataset (and version): the
// prefix and "toxgate-" with the ids, so that it is the same on every try.
func (r *Registrar) DOIFor(datasetID, versionID string) string {
	s := r.Prefix + "/toxgate-" + strings.ToLower(datasetID)
	if versionID != "" {
		s += "-" + strings.ToLower(versionID)
	}
	return s
}

// Payload is the JSON:API document that registers w as doi (event
// "publish": findable at once), its landing page w.URL.
func Payload(w Work, doi string) ([]byte, error) {
	w.DOI = doi
	attrs, err := json.Marshal(DataCiteMetadata(w))
	if err != nil {
		return nil, fmt.Errorf("datacite metadata: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(attrs, &m); err != nil {
		return nil, fmt.Errorf("datacite metadata: %w", err)
	}
	m["doi"], m["event"], m["url"] = doi, "publish", w.URL
	return json.Marshal(map[string]any{"data": map[string]any{"id": doi, "type": "dois", "attributes": m}})
}

// Register registers (or updates) doi for w and returns the DOI DataCite
// recorded.
func (r *Registrar) Register(ctx context.Context, w Work, doi string) (string, error) {
	body, err := Payload(w, doi)
	if err != nil {
		return "", err
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	endpoint := strings.TrimSuffix(r.APIURL, "/") + "/dois/" + url.PathEscape(doi)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, endpoint, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("datacite request: %w", err)
	}
	req.Header.Set("Content-Type", "application/vnd.api+json")
	req.SetBasicAuth(r.RepositoryID, r.Password)
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return "", fmt.Errorf("datacite: %w", err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxDataCiteReply))
	if err != nil {
		return "", fmt.Errorf("datacite reply: %w", err)
	}
	var out struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
		Errors []struct {
			Title  string `json:"title"`
			Source string `json:"source"`
		} `json:"errors"`
	}
	_ = json.Unmarshal(reply, &out) // a reply that is not JSON is reported by its status below
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var msgs []string
		for _, e := range out.Errors {
			msgs = append(msgs, strings.TrimSpace(e.Source+" "+e.Title))
		}
		return "", fmt.Errorf("datacite answered %s: %s", resp.Status, strings.Join(msgs, "; "))
	}
	if out.Data.ID == "" {
		return doi, nil
	}
	return out.Data.ID, nil
}
