package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"

	"toxgate/gateway/config"
	"toxgate/gateway/store"
	"toxgate/plugins/contract"
)

// generateCommand runs "toxgate catalog generate": it opens the configured
// store (the embedded one, or mongodb.uri) and runs the catalog plugin's
// program (plugins.programs.catalog) as "toxgate-catalog generate" on it,
// so that the datasets are written by the catalog's own write path while
// this program links no catalog code.
func generateCommand(cfgPath string, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "help" {
			fmt.Fprint(stderr, catalogUsage)
			return 0
		}
	}
	cfg, err := config.Load(cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "toxgate: %v\n", err)
		return 1
	}
	program := cfg.Plugins.Programs["catalog"]
	if program == "" {
		fmt.Fprintln(stderr, "toxgate catalog generate: no catalog plugin program (plugins.programs.catalog)")
		return 1
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URI: cfg.MongoDB.URI, DataDir: cfg.MongoDB.DataDir, Database: cfg.MongoDB.Database,
		Backend: cfg.Store.Backend, PostgresURL: cfg.Store.PostgresURL,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		if cfg.MongoDB.URI == "" {
			fmt.Fprintf(stderr, "toxgate catalog generate: open the embedded store at %s (is a gateway using it? stop it, or use mongodb.uri): %v\n", cfg.MongoDB.DataDir, err)
		} else {
			fmt.Fprintf(stderr, "toxgate catalog generate: %v\n", err)
		}
		return 1
	}
	defer func() { _ = st.Close(context.Background()) }()
	cmd := exec.CommandContext(ctx, program, append([]string{"generate"}, args...)...)
	cmd.Env = append(os.Environ(), contract.EnvMongoURI+"="+st.URI(), contract.EnvMongoDatabase+"="+cfg.MongoDB.Database)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "toxgate catalog generate: run %s: %v\n", program, err)
		return 1
	}
	return 0
}
