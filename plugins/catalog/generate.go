package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"toxgate/catalog"
	"toxgate/plugins/contract"
)

const generateUsage = `usage: toxgate-catalog generate --datasets N [--organizations K] [--seed S] [--writers W] [--quiet]

Fills the catalog in the MongoDB database named by TOXGATE_MONGODB_URI and
TOXGATE_MONGODB_DATABASE with N generated datasets (see catalog.Generate).
Run through "toxgate catalog generate", which opens the configured store.
`

// generateCommand runs "toxgate-catalog generate".
func generateCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toxgate-catalog generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, generateUsage) }
	var o catalog.GenerateOptions
	quiet := false
	fs.IntVar(&o.Datasets, "datasets", 0, "how many datasets")
	fs.IntVar(&o.Organizations, "organizations", 0, "how many organizations (0: one per 500 datasets, at least 3)")
	fs.Int64Var(&o.Seed, "seed", 1, "random seed (the same seed makes the same catalog)")
	fs.IntVar(&o.Writers, "writers", catalog.DefaultGenerateWriters, "datasets written at once (their store round trips are shared)")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || o.Datasets <= 0 || o.Datasets > catalog.MaxGenerateDatasets || o.Organizations < 0 || o.Writers < 1 || o.Writers > 1024 {
		fmt.Fprintf(stderr, "toxgate catalog generate: --datasets must be between 1 and %d, --writers between 1 and 1024\n", catalog.MaxGenerateDatasets)
		fs.Usage()
		return 2
	}
	uri := os.Getenv(contract.EnvMongoURI)
	if uri == "" {
		fmt.Fprintf(stderr, "toxgate catalog generate: %s is not set\n", contract.EnvMongoURI)
		return 2
	}
	dbName := os.Getenv(contract.EnvMongoDatabase)
	if dbName == "" {
		dbName = "toxgate"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		fmt.Fprintf(stderr, "toxgate catalog generate: connect to MongoDB: %v\n", err)
		return 1
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := catalog.New(ctx, client.Database(dbName), catalog.Options{Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "toxgate catalog generate: %v\n", err)
		return 1
	}
	start := time.Now()
	if !quiet {
		o.Progress = func(done int) {
			if done%1000 == 0 {
				fmt.Fprintf(stderr, "%d of %d datasets (%.0f/s)\n", done, o.Datasets, float64(done)/time.Since(start).Seconds())
			}
		}
	}
	st, err := svc.Generate(ctx, o)
	fmt.Fprintf(stdout, "organizations: %d created; datasets: %d created (%d private), %d already there; %s\n",
		st.Organizations, st.Datasets, st.Private, st.Existing, time.Since(start).Round(time.Millisecond))
	if err != nil {
		fmt.Fprintf(stderr, "toxgate catalog generate: %v\n", err)
		return 1
	}
	return 0
}
