// Command toxgate is the toxgate gateway: `toxgate [-config file] [serve]`
// runs the server; other subcommands administer it (see `toxgate help`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"toxgate/gateway/config"
	"toxgate/gateway/server"
	"toxgate/internal/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: toxgate [-config file] [command]

commands:
  serve         run the gateway (default)
  user ...      administer accounts (toxgate user help)
  client ...    register OpenID Connect clients (toxgate client help)
  catalog import --from URL   copy a CKAN site's catalog (toxgate catalog help)
  catalog generate --datasets N   fill the catalog with generated datasets
  files migrate --to dir|s3|mongodb   move stored files to another backend (toxgate files help)
  config keys   list every configuration key, its environment variable and meaning
  probe [URL]   exit 0 when URL (default http://127.0.0.1:8080/readyz) answers 2xx (container health check)
  version       print the version

The configuration file defaults to $TOXGATE_CONFIG, else configs/toxgate.yaml
if it exists; every key can be overridden with TOXGATE_* environment variables.
`

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("toxgate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", defaultConfigPath(), "configuration file (YAML)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	testRoutes := fs.Bool(testRoutesFlag, false, "add routes used by the test suite (never in production)")
	fs.Usage = func() { printUsage(fs, stderr) }
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		return 2
	}
	cmd := "serve"
	if fs.NArg() > 0 {
		cmd = fs.Arg(0)
	}
	if *showVersion {
		cmd = "version"
	}
	switch cmd {
	case "serve":
		return serve(*cfgPath, *testRoutes, stdout, stderr)
	case "user":
		return userCommand(*cfgPath, fs.Args()[1:], stdout, stderr)
	case "client":
		return clientCommand(*cfgPath, fs.Args()[1:], stdout, stderr)
	case "catalog":
		return catalogCommand(*cfgPath, fs.Args()[1:], stdout, stderr)
	case "files":
		return filesCommand(*cfgPath, fs.Args()[1:], stdout, stderr)
	case "probe":
		return probeCommand(fs.Args()[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, version.Version)
		return 0
	case "config":
		if fs.NArg() < 2 || fs.Arg(1) != "keys" {
			fmt.Fprintln(stderr, "usage: toxgate config keys")
			return 2
		}
		for _, k := range config.Keys() {
			fmt.Fprintf(stdout, "%-28s %-36s %-8s %s\n", k.Name, k.Env, k.Kind, k.Doc)
		}
		return 0
	case "help", "-h", "--help":
		printUsage(fs, stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "toxgate: unknown command %q\n", cmd)
		fs.Usage()
		return 2
	}
}

// testRoutesFlag adds the test suite's routes; it is left out of the help.
const testRoutesFlag = "test-routes"

// printUsage writes the usage and the flags a user may set.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, usage, "\nflags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == testRoutesFlag {
			return
		}
		arg, help := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  -%s\n    \t%s", strings.TrimSpace(f.Name+" "+arg), help)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

func defaultConfigPath() string {
	if p := os.Getenv("TOXGATE_CONFIG"); p != "" {
		return p
	}
	if _, err := os.Stat("configs/toxgate.yaml"); err == nil {
		return "configs/toxgate.yaml"
	}
	return ""
}

func serve(cfgPath string, testRoutes bool, stdout, stderr io.Writer) int {
	cfg, err := config.Load(cfgPath, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "toxgate: %v\n", err)
		return 1
	}
	log := server.NewLogger(stderr, cfg.Log.Format, cfg.Log.Level)
	accessOut := server.NewBufferedWriter(stderr, 64<<10, 200*time.Millisecond)
	accessLog := server.NewAccessLogger(accessOut, cfg.Log.Format, cfg.Log.Level)
	for _, name := range config.UnknownEnv(os.Environ()) {
		log.Warn("environment variable matches no configuration key", "name", name)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The listener is opened first: a busy port stops the start at once,
	// and the site's URL (links in e-mails, upload URLs) is the address
	// really listened on when server.public_url is empty.
	ln, err := server.Listen(cfg.Server.Addr)
	if err != nil {
		log.Error("start failed", "err", err)
		return 1
	}
	cfg.Server.PublicURL = server.SiteURL(cfg.Server.PublicURL, ln.Addr().String())

	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	app, err := server.New(startCtx, cfg, server.Options{Version: version.Version, Logger: log, AccessLog: accessLog, EnableTestRoutes: testRoutes})
	cancel()
	if err != nil {
		_ = ln.Close()
		log.Error("start failed", "err", err)
		return 1
	}
	if err := server.Attach(ctx, app); err != nil {
		_ = ln.Close()
		log.Error("start failed", "err", err)
		shutdownCtx, c := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
		_ = app.Shutdown(shutdownCtx)
		c()
		return 1
	}
	fmt.Fprintf(stdout, "toxgate %s serving on %s\n", version.Version, app.URL(ln.Addr()))
	for _, line := range app.Banner() {
		fmt.Fprintln(stdout, line)
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- app.Serve(ln) }()

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	code := 0
loop:
	for {
		select {
		case <-ctx.Done():
			log.Info("shutting down", "deadline", cfg.Server.ShutdownTimeout)
			break loop
		case <-hup:
			log.Info("SIGHUP: reloading plugins and modules")
			app.Reload(context.Background())
		case err := <-serveErr:
			if err != nil {
				log.Error("server stopped", "err", err)
				code = 1
			}
			break loop
		}
	}
	stop()
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancelShutdown()
	if err := app.Shutdown(shutdownCtx); err != nil {
		log.Error("shutdown", "err", err)
		if !errors.Is(err, context.DeadlineExceeded) {
			code = 1
		}
	}
	_ = accessOut.Close() // flush the access log before the last line
	log.Info("stopped")
	return code
}
