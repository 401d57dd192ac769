package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"toxgate/gateway/harness"
)

// TestModelPageResolvesNames runs hERG from its page with a name, a CAS
// number and a SMILES on three lines: the page sends the resolved SMILES,
// shows what it resolved (and from which source) beside the result, and a
// JSON download carries the resolutions as "resolved"; a CAS number with a
// wrong check digit is refused with the reason.
func TestModelPageResolvesNames(t *testing.T) {
	g := harness.Start(t, harness.WithEnv("TOXGATE_MODULES_DIR="+modulesDir(t, "herg")))
	admin := adminToken(t, g)
	provision(t, g, admin, "mia", "mia-password-1", true, "models")
	w := newWebClient(t, g)
	w.login("mia", "mia-password-1")
	run := func(smiles, format string) (int, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("csrf", w.csrf("/dashboard"))
		_ = mw.WriteField("route", "0")
		_ = mw.WriteField("f_smiles", smiles)
		_ = mw.WriteField("format", format)
		_ = mw.Close()
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/models/herg/run", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := w.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	code, out := run("aspirin\n50-78-2\nCCO", "json")
	var ans struct {
		Resolved []struct {
			Input, SMILES, DTXSID string
			Sources               map[string]string
		}
	}
	if err := json.Unmarshal(out, &ans); code != 200 || err != nil || len(ans.Resolved) != 2 {
		t.Fatalf("json: %d %v %.400s", code, err, out)
	}
	for _, r := range ans.Resolved {
		if r.DTXSID != "DTXSID5020108" || r.SMILES != "CC(=O)Oc1ccccc1C(=O)O" || r.Sources["smiles"] != "invitrodb" {
			t.Errorf("resolved %+v", r)
		}
	}
	if !bytes.Contains(out, []byte(`"CCO"`)) {
		t.Errorf("the SMILES line did not reach the model as typed: %.400s", out)
	}
	code, out = run("aspirin", "html")
	if code != 200 || !bytes.Contains(out, []byte(`id="result-resolved"`)) || !bytes.Contains(out, []byte("DTXSID5020108")) || !bytes.Contains(out, []byte(`id="result-table"`)) {
		t.Fatalf("html: %d %.600s", code, out)
	}
	code, out = run("50-78-3", "html")
	if code != 422 || !strings.Contains(string(out), "check digit") {
		t.Fatalf("wrong check digit: %d %.600s", code, out)
	}
}
