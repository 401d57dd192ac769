package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"toxgate/gateway/harness"
)

// peerStartTimeout bounds the peer's start: it fits its forest at the
// first start (minutes on a busy 2-core machine; later starts read it from
// bin/bench-peer).
const peerStartTimeout = 30 * time.Minute

// startPeer runs the Flask benchmark peer (bench/peer-flask) as the
// original platform ran it: gunicorn with 2 sync workers, the model loaded
// once before the workers fork (--preload). It needs Debian's gunicorn,
// python3-flask, python3-rdkit and python3-sklearn (make bench-deps); the
// error says what is missing.
func startPeer(ctx context.Context) (string, func(), error) {
	root := harness.RepoRoot()
	gunicorn, err := exec.LookPath("gunicorn")
	if err != nil {
		return "", nil, errors.New("no gunicorn on PATH (make bench-deps installs gunicorn python3-flask python3-rdkit python3-sklearn)")
	}
	// Debian's gunicorn runs Debian's python3, which has the packages.
	if out, err := exec.Command("/usr/bin/python3", "-c", "import flask, rdkit, sklearn").CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("the peer's Python packages are missing (make bench-deps installs python3-flask python3-rdkit python3-sklearn): %s", strings.TrimSpace(string(out)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(gunicorn, "--chdir", filepath.Join(root, "bench", "peer-flask"),
		"--preload", "--workers", "2", "--bind", addr, "--log-level", "warning", "app:app")
	cmd.Env = append(os.Environ(), "PEER_CACHE="+filepath.Join(root, "bin", "bench-peer"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting gunicorn: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	url := "http://" + addr
	fmt.Fprintf(os.Stderr, "toxgate-bench: starting the Flask peer on %s (fits its forest at the first start)\n", url)
	deadline := time.Now().Add(peerStartTimeout)
	for {
		if res, err := http.Get(url + "/IsAlive"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url, stop, nil
			}
		}
		select {
		case err := <-exited:
			exited <- err
			stop()
			return "", nil, fmt.Errorf("the peer exited: %v", err)
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the peer did not answer within %s", peerStartTimeout)
		}
	}
}
