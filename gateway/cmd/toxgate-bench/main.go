// Command toxgate-bench runs the loopback benchmarks of `make bench`: it
// starts the real gateway (and baselines such as a bare fasthttp server) on
// 127.0.0.1, drives them with the closed-loop load generator, and prints each
// figure beside its baseline measured in the same run.
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/gateway/harness"
	"toxgate/gateway/loadgen"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bare" {
		serveBare()
		return
	}
	conns := flag.Int("conns", 64, "concurrent connections")
	dur := flag.Duration("duration", 4*time.Second, "measuring time per round")
	rounds := flag.Int("rounds", 3, "rounds per scenario (alternating with the baseline); the median is reported")
	only := flag.String("only", "", "comma-separated scenario names to run (default: all)")
	flag.StringVar(&profileDir, "profile", "", "write the gateway's CPU profile during each scenario's last subject round to this directory")
	vs := flag.String("vs", "", "also run each scenario's subject on a gateway built into this directory (e.g. an older build: its toxgate, toxgate-catalog and modules/), alternating with this one, and print the ratio")
	flag.Parse()

	if err := run(*conns, *dur, *rounds, *only, *vs); err != nil {
		fmt.Fprintln(os.Stderr, "toxgate-bench:", err)
		os.Exit(1)
	}
}

// Env is what a scenario gets: the running gateway, the bare baseline and,
// for a scenario that asks for it, the benchmark peer.
type Env struct {
	Gateway *harness.Gateway
	BareURL string
	// PeerURL is the Flask peer's base URL (bench/peer-flask), set for a
	// scenario with Peer.
	PeerURL string
	Opts    loadgen.Options
}

// Scenario measures one figure against a baseline in the same run.
type Scenario struct {
	Name     string
	Baseline func(e *Env) loadgen.Target
	Subject  func(e *Env) loadgen.Target
	// Setup prepares data before measuring (optional).
	Setup func(ctx context.Context, e *Env) error
	// Target is the documented goal, e.g. "≥ 80% of baseline".
	Target string
	// Conns overrides the number of connections (e.g. 1 for latency).
	Conns int
	// Needs names the model paths the scenario calls: it is skipped, and
	// says so, when the gateway serves none of them (a module that was
	// not built, such as the Rust example without a wasm32 rustc).
	Needs []string
	// Peer asks for the Flask benchmark peer (bench/peer-flask): the
	// scenario is skipped, and says so, when it cannot run.
	Peer bool
	// GatewayEnv, when set, runs the scenario on a gateway of its own
	// started with these settings (TOXGATE_* overrides) instead of the
	// shared one.
	GatewayEnv []string
	// Times reports the subject as a multiple of the baseline (for a
	// baseline far slower than the subject).
	Times bool
}

var scenarios = []Scenario{
	{
		Name:     "IsAlive (full middleware chain) vs bare fasthttp",
		Baseline: func(e *Env) loadgen.Target { return loadgen.Target{URL: e.BareURL + "/IsAlive"} },
		Subject:  isAlive,
		Target:   "subject ≥ 80% of baseline req/s",
	},
	{
		Name:     "small model call (example-units convert) vs IsAlive",
		Baseline: isAlive,
		Subject:  postJSON("/example/units/convert", []byte(convertBody)),
		Target:   "subject ≥ 50% of baseline req/s",
	},
	{
		Name:     "small Rust module call (example-rust convert, raw ABI) vs IsAlive",
		Baseline: isAlive,
		Subject:  postJSON("/example/rust/convert", []byte(convertBody)),
		Target:   "subject ≥ 50% of baseline req/s (the host's own cost: a guest without Go's runtime)",
		Needs:    []string{"/example/rust/convert"},
	},
	{
		Name:     "hERG one SMILES vs IsAlive",
		Baseline: isAlive,
		Subject:  hergOne,
		Target:   "subject p50 ≤ 2 ms (queueing dominates at 64 connections: see the 1-connection figure)",
	},
	{
		Name:     "hERG one SMILES, 16 connections of one caller, vs IsAlive",
		Conns:    16,
		Baseline: isAlive,
		Subject:  hergOne,
		Target:   "no refused call (0 errors): a caller alone waits for the cores, it is not refused",
	},
	{
		Name:     "hERG one SMILES vs IsAlive, 1 connection",
		Conns:    1,
		Baseline: isAlive,
		Subject:  hergOne,
		Target:   "subject p50 ≤ 2 ms",
	},
	{
		Name:       "hERG one SMILES per call, 500 distinct structures, 16 connections of one caller, response cache off: toxgate vs the original stack (Flask peer)",
		Conns:      16,
		Peer:       true,
		GatewayEnv: []string{cacheOffEnv},
		Setup:      waitModelReady("herg"),
		Baseline:   func(e *Env) loadgen.Target { return distinctHERG(e.PeerURL) },
		Subject:    func(e *Env) loadgen.Target { return distinctHERG(e.Gateway.URL) },
		Target:     "subject ≥ 30× baseline req/s, 0 non-2xx on both",
		Times:      true,
	},
	{
		Name:     "hERG batch of 1000 SMILES (1 connection) vs one SMILES",
		Conns:    1,
		Baseline: hergOne,
		Subject:  func(e *Env) loadgen.Target { return postJSON("/hERG/evaluate", batchBody(1000))(e) },
		Target:   "a 1000-molecule batch on an idle server ≤ 0.12 s (p50 of the subject): one call, not cut into slices",
	},
}

// waitModelReady waits until the gateway's model name is ready (OIP
// /v2/models/{name}/ready answers 200), for a gateway whose /readyz does
// not wait for the models (server.ready_status = core).
func waitModelReady(name string) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		for {
			req, err := http.NewRequestWithContext(ctx, "GET", e.Gateway.URL+"/v2/models/"+name+"/ready", nil)
			if err != nil {
				return err
			}
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("model %s not ready: %w", name, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// cacheOffEnv switches the gateway's response cache off
// (modules.response_cache_bytes = 0), so that every call is computed as the
// peer computes it.
const cacheOffEnv = "TOXGATE_MODULES_RESPONSE_CACHE_BYTES=0"

// distinctHERG is /hERG/evaluate at base with one SMILES per call, in turn
// the first 500 distinct structures of the hERG training data
// (modules/internal/data/herg_karim.csv), the same bodies for the gateway
// and the peer.
func distinctHERG(base string) loadgen.Target {
	return loadgen.Target{Method: "POST", URL: base + "/hERG/evaluate",
		Header: map[string]string{"Content-Type": "application/json"}, Bodies: hergBodies(500)}
}

// hergBodies is {"smiles": "..."} for the first n distinct SMILES of the
// hERG training data.
func hergBodies(n int) [][]byte {
	f, err := os.Open(filepath.Join(harness.RepoRoot(), "modules", "internal", "data", "herg_karim.csv"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		panic(err)
	}
	seen := map[string]bool{}
	var bodies [][]byte
	for _, r := range rows[1:] {
		if len(bodies) == n {
			break
		}
		if seen[r[0]] {
			continue
		}
		seen[r[0]] = true
		b, _ := json.Marshal(map[string]string{"smiles": r[0]})
		bodies = append(bodies, b)
	}
	return bodies
}

// convertBody is the example converters' request (the Go and the Rust module).
const convertBody = `{"value":10,"from":"mg/L","to":"uM","molar_mass":543.52}`

// isAlive is a GET of the gateway's /IsAlive.
func isAlive(e *Env) loadgen.Target { return loadgen.Target{URL: e.Gateway.URL + "/IsAlive"} }

// postJSON is a POST of body to the gateway's path as application/json.
func postJSON(path string, body []byte) func(*Env) loadgen.Target {
	return func(e *Env) loadgen.Target {
		return loadgen.Target{Method: "POST", URL: e.Gateway.URL + path,
			Header: map[string]string{"Content-Type": "application/json"}, Body: body}
	}
}

// hergOne is /hERG/evaluate with the original platform's example SMILES.
var hergOne = postJSON("/hERG/evaluate", []byte(`{"smiles":"C2C(N=Cc1ccccc1)=C(N(N2c3ccccc3)C)C"}`))

// batchBody is {"smiles":[...]} with the first n SMILES of the RDKit
// reference set (sdk/chem/testdata), a realistic mix of Tox21 structures.
func batchBody(n int) []byte {
	f, err := os.Open(filepath.Join(harness.RepoRoot(), "sdk", "chem", "testdata", "rdkit_descriptors_tox21_3000.csv"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		panic(err)
	}
	var smiles []string
	for _, r := range rows[1:] {
		if len(smiles) == n {
			break
		}
		smiles = append(smiles, r[0])
	}
	b, _ := json.Marshal(map[string]any{"smiles": smiles})
	return b
}

func run(conns int, dur time.Duration, rounds int, only, vs string) error {
	ctx := context.Background()
	bins, err := harness.BuildBinaries()
	if err != nil {
		return err
	}
	bareURL, stopBare, err := startBare()
	if err != nil {
		return err
	}
	defer stopBare()
	// One load generator is one caller, with the gateway's own settings:
	// a caller alone gets every core (gateway/modulehost/README.md).
	launch := func(bins harness.Binaries, env ...string) (*harness.Gateway, error) {
		return harness.Launch(bins, harness.WithLogSink(io.Discard), harness.WithAllModules(),
			harness.WithEnv(append(append([]string{"TOXGATE_MODULES_REQUIRE_TOKEN=false"}, env...),
				strings.Fields(os.Getenv("TOXGATE_BENCH_ENV"))...)...))
	}
	gw, err := launch(bins)
	if err != nil {
		return err
	}
	defer func() {
		gw.Close()
	}()
	env := &Env{Gateway: gw, BareURL: bareURL, Opts: loadgen.Options{Conns: conns, Duration: dur}}
	var other *Env
	if vs != "" {
		ob := harness.Binaries{Dir: vs, Gateway: filepath.Join(vs, "toxgate"), Modules: filepath.Join(vs, "modules")}
		// An older build reads its own configs/toxgate.yaml (beside its
		// bin directory), not this tree's, which may have keys it lacks.
		var oenv []string
		if cfg := filepath.Join(vs, "..", "configs", "toxgate.yaml"); fileExists(cfg) {
			oenv = append(oenv, "TOXGATE_CONFIG="+cfg)
		}
		ogw, err := launch(ob, oenv...)
		if err != nil {
			return fmt.Errorf("-vs %s: %w", vs, err)
		}
		defer func() {
			ogw.Close()
		}()
		other = &Env{Gateway: ogw, BareURL: bareURL, Opts: env.Opts}
		fmt.Printf("each subject also on the gateway of %s (\"vs\"), alternating\n", vs)
	}
	fmt.Printf("toxgate-bench: %d connections, %s per round, %d rounds, median reported (GOMAXPROCS=%s)\n\n",
		conns, dur, rounds, os.Getenv("GOMAXPROCS"))
	failed := false
	var (
		peerURL  string
		stopPeer func()
		peerErr  error
	)
	for _, sc := range scenarios {
		if only != "" && !strings.Contains(","+only+",", ","+sc.Name+",") {
			continue
		}
		if missing := missingPaths(gw.URL, sc.Needs); len(missing) > 0 {
			fmt.Printf("%s\n  SKIPPED: no module serves %s (not built: the Rust example needs a rustc with the wasm32 target, see README.md)\n\n",
				sc.Name, strings.Join(missing, ", "))
			continue
		}
		env := env
		if sc.Peer {
			if peerURL == "" && peerErr == nil {
				peerURL, stopPeer, peerErr = startPeer(ctx)
				if stopPeer != nil {
					defer stopPeer()
				}
			}
			if peerErr != nil {
				fmt.Printf("%s\n  SKIPPED: %v\n\n", sc.Name, peerErr)
				continue
			}
			e := *env
			e.PeerURL = peerURL
			env = &e
		}
		if len(sc.GatewayEnv) > 0 {
			sgw, err := launch(bins, sc.GatewayEnv...)
			if err != nil {
				return fmt.Errorf("%s: gateway: %w", sc.Name, err)
			}
			e := *env
			e.Gateway = sgw
			env = &e
		}
		if sc.Setup != nil {
			if err := sc.Setup(ctx, env); err != nil {
				return fmt.Errorf("%s: setup: %w", sc.Name, err)
			}
		}
		opts := env.Opts
		if sc.Conns > 0 {
			opts.Conns = sc.Conns
		}
		var base, subj, vsRes []loadgen.Result
		for i := 0; i < rounds; i++ {
			if other != nil {
				v, err := loadgen.Run(ctx, sc.Subject(other), opts)
				if err != nil {
					return fmt.Errorf("%s: vs: %w", sc.Name, err)
				}
				vsRes = append(vsRes, v)
			}
			b, err := loadgen.Run(ctx, sc.Baseline(env), opts)
			if err != nil {
				return fmt.Errorf("%s: baseline: %w", sc.Name, err)
			}
			var prof chan error
			if profileDir != "" && i == rounds-1 {
				prof = make(chan error, 1)
				go func() { prof <- profileGateway(ctx, gw.URL, sc.Name, opts.Duration) }()
			}
			s, err := loadgen.Run(ctx, sc.Subject(env), opts)
			if prof != nil {
				if perr := <-prof; perr != nil {
					fmt.Fprintln(os.Stderr, "toxgate-bench: profile:", perr)
				}
			}
			if err != nil {
				return fmt.Errorf("%s: subject: %w", sc.Name, err)
			}
			base, subj = append(base, b), append(subj, s)
		}
		b, s := median(base), median(subj)
		if sc.Times {
			fmt.Printf("%s\n  baseline %s\n  subject  %s\n  ratio    %.1f× baseline req/s   (target: %s)\n",
				sc.Name, b, s, s.RPS/b.RPS, sc.Target)
		} else {
			fmt.Printf("%s\n  baseline %s\n  subject  %s\n  ratio    %.1f%% of baseline req/s   (target: %s)\n",
				sc.Name, b, s, 100*s.RPS/b.RPS, sc.Target)
		}
		if other != nil {
			v := median(vsRes)
			fmt.Printf("  vs       %s\n  subject/vs: %.2f× req/s, p50 %.2f×\n", v, s.RPS/v.RPS, float64(s.P50)/float64(max(1, v.P50)))
			if v.Errors > 0 {
				fmt.Printf("  vs had failed requests: %q\n", v.FirstErr)
			}
		}
		if s.Errors > 0 || b.Errors > 0 {
			fmt.Printf("  INVALID: requests failed: baseline %q subject %q\n", b.FirstErr, s.FirstErr)
			failed = true
		}
		fmt.Println()
		if env.Gateway != gw {
			env.Gateway.Close()
		}
	}
	if failed {
		return fmt.Errorf("some scenarios had failed requests")
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// missingPaths returns the paths of paths that no model of the gateway
// serves (by its index, GET /models).
func missingPaths(gatewayURL string, paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	res, err := http.Get(gatewayURL + "/models")
	if err != nil {
		return paths
	}
	defer res.Body.Close()
	var index struct {
		Models []struct {
			Routes []struct {
				Path string `json:"path"`
			} `json:"routes"`
		} `json:"models"`
	}
	if json.NewDecoder(res.Body).Decode(&index) != nil {
		return paths
	}
	served := map[string]bool{}
	for _, m := range index.Models {
		for _, r := range m.Routes {
			served[r.Path] = true
		}
	}
	var missing []string
	for _, p := range paths {
		if !served[p] {
			missing = append(missing, p)
		}
	}
	return missing
}

// profileDir is where -profile writes CPU profiles ("" for none).
var profileDir string

// profileGateway fetches a CPU profile of the gateway (its -test-routes
// /debug/pprof) covering most of a subject round, into profileDir.
func profileGateway(ctx context.Context, gatewayURL, scenario string, round time.Duration) error {
	secs := max(1, int((round*3/4)/time.Second))
	ctx, cancel := context.WithTimeout(ctx, round+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", gatewayURL, secs), nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", req.URL, res.StatusCode)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, scenario)
	if err := os.MkdirAll(profileDir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(profileDir, name+".pprof"))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func median(rs []loadgen.Result) loadgen.Result {
	sort.Slice(rs, func(i, j int) bool { return rs[i].RPS < rs[j].RPS })
	return rs[len(rs)/2]
}

// startBare runs this program as a bare fasthttp server in a child process.
func startBare() (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "bare")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return "", nil, fmt.Errorf("bare server: %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	return "http://" + strings.TrimSpace(line), stop, nil
}

// serveBare answers every request with a fixed IsAlive-like JSON body: the
// fastest a fasthttp server can be on this machine.
func serveBare() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	body := []byte(`{"alive":true,"version":"bare","uptime_s":0}`)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBody(body)
	}}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
