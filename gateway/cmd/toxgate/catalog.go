package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"

	"toxgate/gateway/ckanimport"
	"toxgate/gateway/config"
	"toxgate/internal/egress"
)

const catalogUsage = `usage: toxgate [-config file] catalog import --from URL [flags]
       toxgate [-config file] catalog generate --datasets N [--organizations K] [--seed S] [--writers W] [--quiet]

generate fills the configured store's catalog with N realistic datasets
(gen-0000001, ...: organizations, tags with a long tail, extras, link
resources, one in ten private) through the catalog's write path, for
trying it at scale; datasets already there are kept, so a larger N adds
the rest. It opens the store itself: with the embedded store, stop the
gateway first.

import:

Copies a CKAN site's organizations, groups, tag vocabularies, datasets and
resources (and their uploaded files with --with-files) through its public action API into
a toxgate catalog, keeping ids and names. A later run copies only what
changed at the source since the previous one; an interrupted run (Ctrl-C,
a lost connection) resumes where it stopped.

flags:
  --from URL         the source site (CKAN 2.x or toxgate)
  --from-token T     an API token for the source (to copy private datasets too)
  --to URL           the target gateway (default: server.public_url, else server.addr,
                     of the configuration)
  --token T          a sysadmin's API token on the target (also $TOXGATE_TOKEN)
  --org NAME         only this organization and its datasets
  --since TIME       datasets modified at the source since TIME (2024-07-24 or
                     2024-07-24T10:00:00Z) instead of since the previous run
  --with-files       copy uploaded files too (checked by SHA-256); file URLs
                     on another host than --from are fetched only when the
                     egress policy allows them (egress.allow), each file
                     at most catalog.max_resource_bytes
  --state FILE       where the run's state is kept (default: under
                     $XDG_STATE_HOME or ~/.local/state/toxgate/)
  --quiet            no progress bar
`

// catalogCommand runs `toxgate catalog import` and `toxgate catalog generate`.
func catalogCommand(cfgPath string, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "generate" {
		return generateCommand(cfgPath, args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "import" {
		fmt.Fprint(stderr, catalogUsage)
		if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("toxgate catalog import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, catalogUsage) }
	var o ckanimport.Options
	var since string
	quiet := false
	fs.StringVar(&o.From, "from", "", "source site URL")
	fs.StringVar(&o.FromToken, "from-token", "", "API token for the source")
	fs.StringVar(&o.To, "to", "", "target gateway URL")
	fs.StringVar(&o.Token, "token", os.Getenv("TOXGATE_TOKEN"), "a sysadmin's API token on the target")
	fs.StringVar(&o.Org, "org", "", "only this organization")
	fs.StringVar(&since, "since", "", "datasets modified at the source since this time")
	fs.BoolVar(&o.WithFiles, "with-files", false, "copy uploaded files")
	fs.StringVar(&o.StatePath, "state", "", "state file")
	fs.BoolVar(&quiet, "quiet", false, "no progress bar")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toxgate catalog import: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if o.From == "" {
		fmt.Fprintln(stderr, "toxgate catalog import: --from is required")
		return 2
	}
	if since != "" {
		t, err := parseSince(since)
		if err != nil {
			fmt.Fprintf(stderr, "toxgate catalog import: --since: %v\n", err)
			return 2
		}
		o.Since = t
	}
	cfg, err := config.Load(cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "toxgate: %v\n", err)
		return 1
	}
	if o.To == "" {
		o.To = cfg.Server.PublicURL
		if o.To == "" {
			o.To = "http://" + cfg.Server.Addr
		}
	}
	// the source's file URLs are fetched under the egress policy
	if o.Egress, err = egress.New(egress.Options{Allow: cfg.Egress.Allow, MaxRedirects: cfg.Egress.MaxRedirects}); err != nil {
		fmt.Fprintf(stderr, "toxgate: %v\n", err)
		return 1
	}
	o.IdleTimeout, o.MaxFileBytes = cfg.Egress.IdleTimeout, int64(cfg.Catalog.MaxResourceBytes)
	o.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if !quiet {
		o.Progress = newBar(stderr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	st, err := ckanimport.Run(ctx, o)
	if b, ok := o.Progress.(*bar); ok {
		b.finish()
	}
	if st.Resumed {
		fmt.Fprintln(stdout, "resumed an interrupted import")
	}
	if st.Since != "" {
		fmt.Fprintf(stdout, "looked at datasets modified at the source since %s (UTC)\n", st.Since)
	}
	fmt.Fprintf(stdout, "organizations: %d created or updated; groups: %d created or updated; vocabularies: %d created or given tags\n",
		st.Organizations, st.Groups, st.Vocabularies)
	if st.GroupsSkipped != "" {
		fmt.Fprintf(stdout, "groups not copied: %s\n", st.GroupsSkipped)
	}
	if st.VocabulariesSkipped != "" {
		fmt.Fprintf(stdout, "vocabularies not copied: %s\n", st.VocabulariesSkipped)
	}
	fmt.Fprintf(stdout, "datasets: %d created, %d updated, %d failed; files: %d (%d bytes); %s\n",
		st.Created, st.Updated, st.Failed, st.Files, st.FileBytes, time.Since(start).Round(time.Millisecond))
	for _, f := range st.Failures {
		fmt.Fprintf(stdout, "  failed: %s\n", f)
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "toxgate catalog import: interrupted; run the same command again to resume")
		return 130
	case err != nil:
		fmt.Fprintf(stderr, "toxgate catalog import: %v\n", err)
		return 1
	case st.Failed > 0:
		return 1
	}
	return 0
}

func parseSince(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date or date-time (2024-07-24, 2024-07-24T10:00:00Z)", s)
}

// bar shows the datasets done, created/updated/failed counts and the ETA on
// a terminal; elsewhere (a log, a pipe) it prints nothing.
type bar struct {
	b                        *progressbar.ProgressBar
	w                        io.Writer
	tty                      bool
	created, updated, failed int
}

func newBar(w io.Writer) *bar {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = isatty.IsTerminal(f.Fd())
	}
	return &bar{w: w, tty: tty}
}

func (b *bar) Total(n int) {
	if !b.tty {
		return
	}
	b.b = progressbar.NewOptions(n, progressbar.OptionSetWriter(b.w), progressbar.OptionSetDescription("datasets"),
		progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
}

func (b *bar) Dataset(name string, o ckanimport.Outcome) {
	switch o {
	case ckanimport.Created:
		b.created++
	case ckanimport.Updated:
		b.updated++
	default:
		b.failed++
	}
	if b.b == nil {
		return
	}
	b.b.Describe(fmt.Sprintf("datasets (%d new, %d updated, %d failed) %s", b.created, b.updated, b.failed, shorten(name, 24)))
	_ = b.b.Add(1)
}

func (b *bar) finish() {
	if b.b != nil {
		_ = b.b.Finish()
	}
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s + strings.Repeat(" ", n-len(s))
	}
	return s[:n-1] + "…"
}
