package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
	"toxgate/internal/testenv"
)

// balancer is an HAProxy in front of the gateways, checking each on
// /readyz; its statistics page tells which servers it routes to.
type balancer struct {
	URL   string // the frontend
	stats string // the statistics page (CSV)
	cmd   *exec.Cmd
	logs  bytes.Buffer
}

// startBalancer runs HAProxy on two free loopback ports with one server
// per address, configured from deploy/haproxy/haproxy.cfg.tmpl (the file
// `make cluster` uses too): health checks on GET /readyz, retries of
// requests a closing server never answered on another server.
func startBalancer(t testing.TB, addrs []string) *balancer {
	t.Helper()
	bin := testenv.RequireTool(t, testenv.HAProxy)
	fe, st := freeLoopback(t), freeLoopback(t)
	var servers strings.Builder
	for i, a := range addrs {
		fmt.Fprintf(&servers, "  server g%d %s check cookie g%d\n", i, a, i)
	}
	tmpl, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "deploy", "haproxy", "haproxy.cfg.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := os.Expand(string(tmpl), func(k string) string {
		return map[string]string{"FRONTEND": fe, "STATS": st, "SERVERS": servers.String()}[k]
	})
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &balancer{URL: "http://" + fe, stats: "http://" + st + "/stats;csv"}
	b.cmd = exec.Command(bin, "-db", "-f", path)
	b.cmd.Stdout, b.cmd.Stderr = &b.logs, &b.logs
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	t.Cleanup(func() { _ = b.cmd.Process.Kill(); _ = b.cmd.Wait() })
	waitUntil(t, 30*time.Second, "haproxy serving its statistics", func() bool { _, err := b.states(); return err == nil })
	return b
}

// states maps each server (g0, g1, ...) to HAProxy's status of it (UP,
// DOWN, "UP 1/2", ...).
func (b *balancer) states() (map[string]string, error) {
	resp, err := http.Get(b.stats)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := csv.NewReader(bufio.NewReader(resp.Body))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("stats: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimPrefix(h, "# ")] = i
	}
	out := map[string]string{}
	for _, row := range rows[1:] {
		if row[col["pxname"]] == "gateways" && strings.HasPrefix(row[col["svname"]], "g") {
			out[row[col["svname"]]] = row[col["status"]]
		}
	}
	return out, nil
}

// waitState polls the statistics until server is in state (UP or DOWN)
// and returns how long that took.
func (b *balancer) waitState(t testing.TB, server, state string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	waitUntil(t, within, server+" "+state+" at the balancer", func() bool {
		s, err := b.states()
		return err == nil && s[server] == state
	})
	return time.Since(start)
}

// waitUntil polls cond until it holds or within passes (then t fails).
func waitUntil(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a timing assumption
	}
}

// freeLoopback is a free 127.0.0.1:port.
func freeLoopback(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// call sends one request to base+path and returns its status and body; a
// transport error is status 0 with the error as the body.
func call(ctx context.Context, client *http.Client, method, base, path, token, contentType string, body []byte) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, []byte(err.Error())
	}
	return resp.StatusCode, b
}

// uploadForm is a multipart resource upload: fields, then the file as
// "upload" (what ckanapi sends).
func uploadForm(fields map[string]string, fileName string, data []byte) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("upload", fileName)
	_, _ = fw.Write(data)
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}
