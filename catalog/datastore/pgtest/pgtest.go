// Package pgtest starts a throwaway PostgreSQL server for tests: initdb and
// postgres from Debian's postgresql package (/usr/lib/postgresql/*/bin) in a
// temporary directory, listening on a free loopback port, stopped when the
// test ends. PostgreSQL refuses to run as root, so under root the server runs
// as the "postgres" OS user and the directory is handed to that user.
package pgtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"toxgate/internal/testenv"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// Server is a running PostgreSQL server.
type Server struct {
	// URL is a postgres:// URL for the "postgres" superuser over loopback.
	URL string
	dir string
	cmd *exec.Cmd
}

// ErrNotInstalled is Launch's error when PostgreSQL is not installed.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed")

// binDir finds the newest /usr/lib/postgresql/*/bin holding initdb.
func binDir() (string, error) {
	d, err := testenv.Find(testenv.PostgreSQL)
	if err != nil {
		return "", fmt.Errorf("%w (%v; make ci-deps installs it)", ErrNotInstalled, err)
	}
	return d, nil
}

// Require ends t when err, Launch's error, is ErrNotInstalled: t skips, or
// fails under CI (testenv), since `make ci-deps` installs PostgreSQL and a
// skip there would hide a missing install step.
func Require(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) {
		testenv.Missing(t, testenv.PostgreSQL, err.Error())
	}
}

// Start runs a server for t; without PostgreSQL t skips, or fails under CI
// (Require).
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch()
	if err != nil {
		Require(t, err)
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch starts a server outside of a test; the caller must Stop it.
func Launch() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "toxgate-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgtest: running as root needs a postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		// the server must reach its directory through the temp dir
		_ = os.Chmod(dir, 0o700)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var logs bytes.Buffer
	s.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1",
		"-k", dir, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = &logs, &logs
	if err := s.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		s.Stop()
		return nil, err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("pgtest: postgres not ready: %w\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(name string) (string, error) {
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	u := s.URL[:len(s.URL)-len("/postgres?sslmode=disable")]
	return u + "/" + name + "?sslmode=disable", nil
}

// Stop stops the server (fast shutdown) and removes its directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		s.cmd = nil
	}
	_ = os.RemoveAll(s.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
