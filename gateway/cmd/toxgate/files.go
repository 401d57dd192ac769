package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"toxgate/catalog/filestore"
	"toxgate/gateway/config"
	"toxgate/gateway/server"
	"toxgate/gateway/store"
)

const filesUsage = `usage: toxgate [-config file] files migrate --to dir|s3|mongodb

Moves the bytes of every stored file to another backend of the file store
(files.dir, files.s3.*, or the catalog's database), one file at a time:
each is copied under the same id, checked by SHA-256, made durable, then
the catalog's file record is switched to the target, and only then are the
source's bytes deleted. An interrupted run is run again: it skips what has
moved and copies the rest. Set files.backend to the target too, so that
new files go there.

With the embedded store (mongodb.uri empty), stop the gateway first: the
store has one user at a time.
`

// filesCommand runs `toxgate files migrate`.
func filesCommand(cfgPath string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "migrate" {
		fmt.Fprint(stderr, filesUsage)
		if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	fset := flag.NewFlagSet("toxgate files migrate", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() { fmt.Fprint(stderr, filesUsage) }
	to := fset.String("to", "", "target backend: dir, s3 or mongodb")
	if err := fset.Parse(args[1:]); err != nil {
		return 2
	}
	switch *to {
	case filestore.BackendDir, filestore.BackendS3, filestore.BackendMongoDB:
	default:
		fmt.Fprintf(stderr, "toxgate files migrate: --to must be dir, s3 or mongodb, got %q\n", *to)
		return 2
	}
	cfg, err := config.Load(cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "toxgate: %v\n", err)
		return 1
	}
	if cfg.MongoDB.URI == "" {
		if _, err := os.Stat(cfg.MongoDB.DataDir); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "toxgate files migrate: no embedded store at %s (check -config and mongodb.data_dir)\n", cfg.MongoDB.DataDir)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := store.Open(ctx, store.Options{URI: cfg.MongoDB.URI, DataDir: cfg.MongoDB.DataDir, Database: cfg.MongoDB.Database,
		Backend: cfg.Store.Backend, PostgresURL: cfg.Store.PostgresURL, Logger: quiet})
	if err != nil {
		fmt.Fprintf(stderr, "toxgate files migrate: open the store (is a gateway using the embedded store? stop it first): %v\n", err)
		return 1
	}
	defer st.Close(context.Background())
	files, err := server.OpenFiles(ctx, cfg, st.DB(), quiet)
	if err != nil {
		fmt.Fprintf(stderr, "toxgate files migrate: %v\n", err)
		return 1
	}
	res, err := files.Migrate(ctx, *to, func(info filestore.Info) {
		fmt.Fprintf(stdout, "moved %s (%s, %d bytes)\n", info.ID, info.Filename, info.Size)
	})
	fmt.Fprintf(stdout, "%d files moved to %s (%d bytes), %d already there, %d deleted meanwhile\n", res.Moved, *to, res.Bytes, res.Already, res.Gone)
	if err != nil {
		fmt.Fprintf(stderr, "toxgate files migrate: %v (run it again to go on)\n", err)
		return 1
	}
	return 0
}
