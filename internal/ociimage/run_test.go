package ociimage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"toxgate/internal/testenv"
)

var loadedRE = regexp.MustCompile(`(?m)^Loaded image(?:\(s\))?: *(\S+)`)

// runImage loads the tarball into podman and runs the gateway from it as
// a container: the process runs as user 65532, serves /IsAlive and its
// core (store in the image's volume, identity, catalog) becomes ready.
func runImage(t *testing.T, tarPath string) {
	t.Helper()
	podman := testenv.RequireTool(t, testenv.Podman)
	out, err := exec.Command(podman, "load", "-i", tarPath).CombinedOutput()
	if err != nil {
		t.Fatalf("podman load: %v\n%s", err, out)
	}
	m := loadedRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("podman load named no image:\n%s", out)
	}
	ref := string(m[1])
	t.Cleanup(func() { _ = exec.Command(podman, "rmi", "-f", ref).Run() })

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	name := fmt.Sprintf("toxgate-image-test-%d", os.Getpid())
	// runc as the runtime, the host's loopback as the network, and
	// resource limits below the sandbox's own (which refuses to raise
	// them): what this machine allows; the image itself asks for nothing.
	run := exec.Command(podman, "--runtime", "runc", "run", "--rm", "--name", name, "--network=host",
		"--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
		"-e", "TOXGATE_SERVER_ADDR="+addr, "-e", "TOXGATE_SERVER_PUBLIC_URL=http://"+addr,
		// ready once the store, identity and catalog are: every model
		// module compiling in the container is not what this test is about
		"-e", "TOXGATE_SERVER_READY_STATUS=core", ref)
	var logs bytes.Buffer
	run.Stdout, run.Stderr = &logs, &logs
	if err := run.Start(); err != nil {
		t.Fatalf("podman run: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = run.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = exec.Command(podman, "rm", "-f", "-t", "5", name).Run()
		<-exited
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 10 * time.Second}
	ready := false
	var last string
	for !ready {
		select {
		case <-exited:
			t.Fatalf("the container exited:\n%s", logs.String())
		case <-ctx.Done():
			t.Fatalf("the container's gateway not ready within 5 minutes (last /readyz: %s):\n%s", last, logs.String())
		case <-time.After(250 * time.Millisecond):
		}
		resp, err := client.Get("http://" + addr + "/readyz")
		if err != nil {
			continue
		}
		var rz struct {
			Ready bool   `json:"ready"`
			Store string `json:"store_backend"`
		}
		err = json.NewDecoder(resp.Body).Decode(&rz)
		resp.Body.Close()
		last = fmt.Sprintf("%d %+v", resp.StatusCode, rz)
		ready = err == nil && rz.Ready && rz.Store != ""
	}
	resp, err := client.Get("http://" + addr + "/IsAlive")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/IsAlive from the container: %v %v", resp, err)
	}
	resp.Body.Close()

	pid, err := exec.Command(podman, "inspect", "--format", "{{.State.Pid}}", name).Output()
	if err != nil {
		t.Fatalf("podman inspect: %v", err)
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/status")
	if err != nil {
		t.Fatalf("the container's process: %v", err)
	}
	if !regexp.MustCompile(`(?m)^Uid:\s+65532\s`).Match(status) {
		t.Errorf("the container's gateway does not run as 65532:\n%s", status)
	}
}
