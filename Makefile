# toxgate: `make run` builds everything and serves on the embedded store;
# `make test` runs every test. See README.md.

GO      ?= go
BIN     := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X toxgate/internal/version.Version=$(VERSION)
# Plugin programs: plugins/<name>/main.go -> bin/toxgate-<name>
PLUGINS := $(patsubst plugins/%/main.go,%,$(wildcard plugins/*/main.go))
# Model modules: modules/<name>/main.go -> bin/modules/<name>.wasm (modules/ holds
# modules; the training program is modules/internal/train, its data modules/internal/data).
MODULES := $(patsubst modules/%/main.go,%,$(wildcard modules/*/main.go))

.PHONY: all build gateway web-vendor plugins modules rust-modules run cluster test deps vet bench bench-deps fuzz train train-check ci-deps s3-server oauth2-proxy helm image clean help

all: build

help:
	@echo "make run    build everything and serve on 127.0.0.1:8080 (embedded store under ./data)"
	@echo "make cluster  three gateways on PostgreSQL and S3 behind HAProxy, on loopback (Ctrl-C stops all)"
	@echo "make test   run every test"
	@echo "make bench  run the benchmarks (loopback only)"
	@echo "make fuzz   run every fuzz target for FUZZTIME each (default 30s)"
	@echo "make train  retrain the models (weights are committed; run does not retrain)"
	@echo "make train-check  retrain into a temporary folder and compare the cross-validation figures"
	@echo "make image  build the container image without a container engine (bin/image; see deploy/README.md)"

build: gateway plugins modules rust-modules

gateway: web-vendor
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/toxgate ./gateway/cmd/toxgate

plugins:
	@mkdir -p $(BIN)
	@for p in $(PLUGINS); do \
		echo "$(GO) build -o $(BIN)/toxgate-$$p ./plugins/$$p"; \
		$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/toxgate-$$p ./plugins/$$p || exit 1; \
	done

# Each Go module is built by sdk/cmd/modbuild: the go tool for wasip1, then
# internal/reloop, which turns the jump tables of Go's wasm code into direct
# branches, then binaryen's wasm-opt when it is installed (make ci-deps
# installs it; TOXGATE_WASM_OPT=off skips it). See sdk/README.md.
modules:
	@mkdir -p $(BIN)/modules
	$(GO) build -o $(BIN)/reloop ./sdk/cmd/reloop
	$(GO) build -o $(BIN)/modbuild ./sdk/cmd/modbuild
	$(BIN)/modbuild -o $(BIN)/modules $(addprefix ./modules/,$(MODULES))

# Modules written in Rust against the raw ABI: modules/<name>/lib.rs ->
# bin/modules/<name>.wasm, built when a rustc with the wasm32 standard
# library is found (Debian: rustc libstd-rust-dev-wasm32 lld; make ci-deps
# installs them), skipped with a note otherwise. Flags as modtest.RustFlags.
RUST_MODULES := $(wildcard modules/*/lib.rs)
RUSTC_WASM = $(shell rust-lld -flavor wasm --version >/dev/null 2>&1 && for r in rustc /usr/bin/rustc; do d=$$($$r --print sysroot 2>/dev/null) && [ -d "$$d/lib/rustlib/wasm32-unknown-unknown" ] && echo $$r && break; done)
RUSTFLAGS_WASM := --edition 2021 --crate-type cdylib --target wasm32-unknown-unknown -C opt-level=3 -C panic=abort -C strip=debuginfo -C lto

rust-modules:
	@mkdir -p $(BIN)/modules
	@RC="$(RUSTC_WASM)"; \
	if [ -z "$$RC" ]; then echo "note: no rustc with the wasm32 target; skipping $(RUST_MODULES) (make ci-deps installs one)"; exit 0; fi; \
	for src in $(RUST_MODULES); do \
		out=$(BIN)/modules/$$(basename $$(dirname $$src)).wasm; \
		echo "$$RC $(RUSTFLAGS_WASM) -o $$out $$src"; \
		$$RC $(RUSTFLAGS_WASM) -o $$out.tmp $$src || exit 1; \
		mv $$out.tmp $$out; \
	done

run: build
	$(BIN)/toxgate -config configs/toxgate.yaml

# cluster: three gateways on one PostgreSQL and one S3 bucket behind
# HAProxy, on loopback (configs/cluster.sh; Ctrl-C stops them all).
cluster: build s3-server
	BIN=$(BIN) configs/cluster.sh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

# test: every test. deps first installs what the tests need beyond Go when
# it may (see deps); a test whose tool is still missing skips, and one
# summary at the end names what was skipped and why. With CI=true those
# skips are failures (internal/testenv).
SKIP_LOG := $(BIN)/test-skips.tsv
test: deps build vet
	@mkdir -p $(BIN); rm -f $(SKIP_LOG)
	@echo "TOXGATE_BIN_DIR=$(BIN) $(GO) test -timeout 45m ./..."
	@TOXGATE_SKIP_LOG=$(SKIP_LOG) TOXGATE_BIN_DIR=$(BIN) $(GO) test -timeout 45m ./...; rc=$$?; \
	if [ -s $(SKIP_LOG) ]; then \
		echo "== skipped for want of a tool (make ci-deps installs them; CI=true makes these failures):"; \
		awk -F'\t' '{k=$$1" (Debian: "$$2")"; n[k]++; if (!(k in ex)) ex[k]=$$3} END {for (k in n) printf "   %s: %d tests, e.g. %s\n", k, n[k], ex[k]}' $(SKIP_LOG) | sort; \
	fi; exit $$rc

# bench: every figure beside a baseline measured in the same run (loopback only;
# every benchmark stops by itself). Takes about 15-20 minutes on 2 cores.
BENCH := TOXGATE_BIN_DIR=$(BIN) $(GO) test -run '^$$'
bench: build bench-deps
	@echo "== gateway core and models end to end (64 connections, loopback); hERG against the original stack (bench/peer-flask)"
	TOXGATE_BIN_DIR=$(BIN) $(GO) run ./gateway/cmd/toxgate-bench
	@echo "== token check overhead (catalog read with a token vs anonymous, 64 connections)"
	$(BENCH) -bench TokenCheckOverhead -benchtime 1x ./gateway/e2e/
	@echo "== catalog: plugin transport, and actions over HTTP with 10,000 datasets"
	$(BENCH) -bench 'Transport|PackageShow|PackageSearch|PackageList|PackageCreate$$' -benchtime 1000x ./gateway/pluginhost/
	@echo "== catalog: creates with 8 writers (group commit; target >= 500/s) beside plain store inserts; memory per dataset and the reply cache"
	$(BENCH) -bench 'PackageCreate8$$' -benchtime 600x ./gateway/pluginhost/
	$(BENCH) -bench 'ReplyCacheMemory' -benchtime 1x ./catalog/
	@echo "== catalog: patches with 8 clients (target >= 100/s) and hot reloads under writes (target: no request over 100 ms), 10,000 datasets"
	$(BENCH) -bench 'PackagePatch8' -benchtime 400x ./gateway/pluginhost/
	$(BENCH) -bench 'ReloadUnderWrites' -benchtime 3x ./gateway/pluginhost/
	$(BENCH) -bench 'Domain' -benchmem ./catalog/
	@echo "== catalog at scale, in process: memory per dataset, indexing vs the index snapshot, package_search / package_show vs a map lookup, 10,000 and 100,000 datasets"
	$(BENCH) -bench 'Scale' -benchtime 1x -timeout 60m ./catalog/ -args -scale=10000,100000
	@echo "== catalog at scale through a real gateway and plugin: generate, start without and with the index snapshot, plugin RSS, package_show and package_search over HTTP beside /IsAlive (TOXGATE_SCALE_DATASETS, default 10,000)"
	$(BENCH) -bench 'CatalogScaleThroughGateway' -benchtime 1x -timeout 120m ./gateway/e2e/
	@echo "== cluster: store cost per catalog write, PostgreSQL vs embedded SQLite (alternating rounds); HAProxy overhead (direct vs balanced, same run) and kill -9 to routed around"
	$(BENCH) -bench 'CatalogWriteStore' -benchtime 200x ./catalog/
	$(BENCH) -bench 'ClusterBalancer' -benchtime 1x -timeout 30m ./gateway/e2e/
	@echo "== catalog files: upload and download of a 512 MiB file vs a local copy, peak RSS of gateway + plugin"
	$(BENCH) -bench 'FileTransfer' -benchtime 1x ./gateway/e2e/
	@echo "== DataStore: 1,000,000-row CSV load per engine; datastore_search via the API vs the engine, 16 connections"
	$(BENCH) -bench DataStore -benchtime 1x -timeout 60m ./catalog/datastore/
	@echo "== structure_search: similarity over 1,000,000 indexed rows, bit-count prefilter beside a plain scan"
	$(BENCH) -bench StructureSearch -benchtime 1x -timeout 30m ./catalog/chemindex/
	@echo "== scoring job: 100,000 SMILES with hERG vs 1,000-SMILES batches; single-call p50 at 4 connections with and without the job"
	$(BENCH) -bench 'ScoringJob' -benchtime 1x -timeout 3h ./gateway/e2e/
	@echo "== DCAT: a catalog page of 100 datasets in Turtle, JSON-LD and RDF/XML vs package_search of the same 100"
	$(BENCH) -bench 'DCATCatalogPage' -benchtime 200x ./gateway/e2e/
	$(BENCH) -bench 'CatalogPageInProcess' -benchmem ./gateway/dcat/
	@echo "== models in the catalog: first publishing pass with every module, and the pass after a restart"
	$(BENCH) -bench 'PublishModels' -benchtime 1x ./gateway/e2e/
	@echo "== model host: pooled call vs native, real modules vs native, serve vs IsAlive, start time"
	$(BENCH) -bench 'CallPooledVsNative' -benchtime 3000x ./gateway/modulehost/
	$(BENCH) -bench 'ModelsVsNative' -benchtime 3x ./gateway/modulehost/
	TOXGATE_CHEM_ROUNDS=8 $(BENCH) -bench 'ChemPipeline|ChemStages' -benchtime 3x -cpu 1 ./gateway/modulehost/
	$(BENCH) -bench 'ServeVsIsAlive' -benchtime 10000x ./gateway/modulehost/
	$(BENCH) -bench 'Start' -benchtime 1x ./gateway/modulehost/
	@echo "== gateway start: catalog serving and every model ready, fresh and restarted, beside compiling the modules serially and in parallel"
	$(BENCH) -bench 'GatewayStart' -benchtime 1x ./gateway/e2e/
	$(BENCH) -bench 'FirstCall' -benchtime 5x ./gateway/modulehost/
	@echo "== gateway idle RSS with every module loaded and ready, beside the modules' .wasm size; first-call latency"
	$(BENCH) -bench 'IdleRSS' -benchtime 1x ./gateway/modulehost/
	@echo "== chemistry toolkit (one core); the module build's collector setting"
	$(BENCH) -bench . -benchtime 1s -cpu 1 ./sdk/chem/
	$(BENCH) -bench CollectorSetting -benchtime 3x -cpu 1 ./internal/wasmbuild/
	@echo "== structure models (native and in the module)"
	$(BENCH) -bench . -benchtime 20x ./modules/herg/... ./modules/ahr/...
	@echo "== kinetics and TK/TD models (native)"
	$(BENCH) -bench . -benchtime 5x ./sdk/ode/ ./modules/pbpk-doxorubicin/... ./modules/pbpk-httk/... ./modules/tk-2d/... ./modules/tk-3d/... ./modules/td-omics/...

# fuzz: every `func FuzzXxx` of the tree, one after another, for FUZZTIME
# each (`make fuzz FUZZTIME=5m`). Their seed corpora (f.Add and testdata/fuzz)
# already run as plain tests in `make test`; new crashers land in the
# package's testdata/fuzz and so become seeds. FUZZ=regexp picks targets.
FUZZTIME ?= 30s
FUZZ     ?= .
fuzz:
	@git grep -l -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go' | xargs -n1 dirname | sort -u | while read -r d; do \
		for t in $$(grep -h -o -E '^func Fuzz[A-Za-z0-9_]*' $$d/*_test.go | cut -d' ' -f2 | grep -E '$(FUZZ)'); do \
			echo "== ./$$d $$t ($(FUZZTIME))"; \
			TOXGATE_BIN_DIR=$(BIN) $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./$$d || exit 1; \
		done; \
	done

# train: retrain the structure-based models from modules/internal/data (deterministic,
# fixed seed) and rewrite the weight bundles the modules embed. The weights are
# committed; run and test never retrain. Kinetic and TK/TD models have no training
# step (published parameters; the DOX viability Hill fit runs in its tests).
train:
	GOMAXPROCS=2 $(GO) run ./modules/internal/train

# train-check retrains into a temporary folder and compares the
# cross-validation reports (every figure of every task and learner, and the
# command) with the committed ones: training is deterministic, so they are
# equal. It takes as long as make train. TRAIN_ONLY=herg,ahr checks those
# alone (clinicaldata needs aop-kesmies and dictrank in the same run).
train-check:
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	GOMAXPROCS=2 $(GO) run ./modules/internal/train -out "$$tmp" $(if $(TRAIN_ONLY),-only $(TRAIN_ONLY)) || exit 1; \
	fail=0; for f in $$(cd "$$tmp" && find . -name 'CV*.md' | sort); do \
		diff -u "modules/$${f#./}" "$$tmp/$${f#./}" || fail=1; \
	done; \
	if [ $$fail = 0 ]; then echo "train-check: the retrained models' cross-validation figures equal the committed ones"; fi; exit $$fail

# The Debian packages the tests need that are not installed: Debian's
# chromium for the browser tests, rustc with the wasm32 standard library and
# lld for the Rust example module, binaryen (wasm-opt) for the module build,
# postgresql for the DataStore tests (they start their own server; see
# catalog/datastore/pgtest), haproxy for the cluster test (the load
# balancer in front of three gateways), python3-rdflib for the DCAT tests, and bibutils,
# python3-citeproc and libxml2-utils (xmllint) that read the citations, npm
# (make web-vendor fetches tus-js-client for the resource form and OpenChemLib
# JS for the molecule drawings), and podman
# with runc, which load and run the container image. The tests
# look for the same things (internal/testenv).
MISSING_PKGS = $(strip $(shell \
	command -v chromium >/dev/null 2>&1 || echo chromium; \
	[ -n "$(RUSTC_WASM)" ] || echo rustc libstd-rust-dev-wasm32 lld; \
	command -v wasm-opt >/dev/null 2>&1 || echo binaryen; \
	[ -s /etc/ssl/certs/ca-certificates.crt ] || echo ca-certificates; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || echo postgresql; \
	command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || echo haproxy; \
	python3 -c 'import rdflib' >/dev/null 2>&1 || /usr/bin/python3 -c 'import rdflib' >/dev/null 2>&1 || echo python3-rdflib; \
	command -v bib2xml >/dev/null 2>&1 || echo bibutils; \
	python3 -c 'import citeproc' >/dev/null 2>&1 || /usr/bin/python3 -c 'import citeproc' >/dev/null 2>&1 || echo python3-citeproc; \
	command -v xmllint >/dev/null 2>&1 || echo libxml2-utils; \
	command -v npm >/dev/null 2>&1 || echo npm; \
	command -v podman >/dev/null 2>&1 || echo podman; \
	command -v runc >/dev/null 2>&1 || echo runc))

# The Debian packages of the benchmark peer (bench/peer-flask: the original
# stack, Flask + RDKit + scikit-learn under gunicorn) that are not installed.
BENCH_PKGS = $(strip $(shell \
	command -v gunicorn >/dev/null 2>&1 || echo gunicorn; \
	/usr/bin/python3 -c 'import flask' >/dev/null 2>&1 || echo python3-flask; \
	/usr/bin/python3 -c 'import rdkit' >/dev/null 2>&1 || echo python3-rdkit; \
	/usr/bin/python3 -c 'import sklearn' >/dev/null 2>&1 || echo python3-sklearn))

# bench-deps installs them when it may (as root or with password-less sudo);
# otherwise toxgate-bench skips the peer's scenario and says why.
bench-deps:
	@PKGS="$(BENCH_PKGS)"; \
	if [ -z "$$PKGS" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then echo "note: the benchmark peer wants the Debian packages $$PKGS and there is no apt-get: its scenario skips"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; else \
		echo "note: the benchmark peer wants the Debian packages $$PKGS; not root and no password-less sudo: its scenario skips"; exit 0; \
	fi; \
	echo "installing $$PKGS for the benchmark peer"; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$PKGS >/dev/null || \
		echo "note: installing $$PKGS failed: the peer's scenario skips"

# web-vendor copies the browser libraries pinned in gateway/web/vendor
# (package.json, package-lock.json: tus-js-client, openchemlib) into
# gateway/web/static/vendor, which the gateway embeds and serves (no CDN).
# Without npm it says so and the build goes on: the resource form then
# uploads with its multipart form, and SMILES show as text (no drawings,
# no structure editor).
WEB_VENDOR := gateway/web/static/vendor/tus.min.js gateway/web/static/vendor/openchemlib.js
web-vendor:
	@stale=; for f in $(WEB_VENDOR); do [ -f $$f ] && [ $$f -nt gateway/web/vendor/package-lock.json ] || stale=1; done; [ -n "$$stale" ] || exit 0; \
	if ! command -v npm >/dev/null 2>&1; then echo "note: no npm: the web pages go without tus-js-client (multipart uploads) and openchemlib (SMILES as text)"; exit 0; fi; \
	(cd gateway/web/vendor && npm ci --no-audit --no-fund --ignore-scripts >/dev/null) && \
	cp gateway/web/vendor/node_modules/tus-js-client/dist/tus.min.js gateway/web/static/vendor/tus.min.js && \
	cp gateway/web/vendor/node_modules/openchemlib/dist/openchemlib.js gateway/web/static/vendor/openchemlib.js || \
	echo "note: npm ci failed: the web pages go without tus-js-client (multipart uploads) and openchemlib (SMILES as text)"

# s3-server builds the S3-compatible server of the file store's tests
# (Versity's versitygw, pinned) from the Go module proxy into bin/tools,
# where internal/testenv finds it; once built it is kept.
VERSITYGW_VERSION := v1.8.0
s3-server: $(BIN)/tools/versitygw
$(BIN)/tools/versitygw:
	@echo "building versitygw $(VERSITYGW_VERSION) (the file store's S3 test server) into $(BIN)/tools"
	GOBIN=$(BIN)/tools $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

# helm: Helm's own command, which lints and renders the chart
# deploy/helm/toxgate in the tests (deploy/), built from the Go module proxy
# at a pinned version into bin/tools (outside the project's go.mod, as
# versitygw); once built it is kept.
HELM_VERSION := v3.22.0
# As Helm's own release build: its version, and the Kubernetes version of
# its client-go (v0.37: 1.37) as the default of lint and template.
HELM_LDFLAGS := -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	$(foreach p,pkg/lint/rules pkg/chartutil,-X helm.sh/helm/v3/$(p).k8sVersionMajor=1 -X helm.sh/helm/v3/$(p).k8sVersionMinor=37)
helm: $(BIN)/tools/helm
$(BIN)/tools/helm:
	@echo "building helm $(HELM_VERSION) (lints and renders deploy/helm/toxgate in the tests) into $(BIN)/tools"
	GOBIN=$(BIN)/tools GOFLAGS=-buildvcs=false $(GO) install -ldflags '$(HELM_LDFLAGS)' helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

# image: the container image, built without a container engine
# (gateway/cmd/toxgate-image, go-containerregistry): static programs
# (CGO_ENABLED=0) in $(BIN)/image/root beside the modules, then
# $(BIN)/image/toxgate-image.tar (docker load, podman load) and
# $(BIN)/image/oci (an OCI layout). See deploy/README.md.
IMAGE_TAG    ?= toxgate:$(VERSION)
IMAGE_SOURCE ?= $(or $(shell git config --get remote.origin.url 2>/dev/null),https://github.com/toxgate/toxgate)
IMAGE_LDFLAGS := -s -w $(LDFLAGS)
image: modules rust-modules
	@mkdir -p $(BIN)/image/root
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(IMAGE_LDFLAGS)' -o $(BIN)/image/root/toxgate ./gateway/cmd/toxgate
	@for p in $(PLUGINS); do \
		echo "CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/image/root/toxgate-$$p ./plugins/$$p"; \
		CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(IMAGE_LDFLAGS)' -o $(BIN)/image/root/toxgate-$$p ./plugins/$$p || exit 1; \
	done
	@ln -sfn $(BIN)/modules $(BIN)/image/root/modules
	$(GO) run ./gateway/cmd/toxgate-image -bin $(BIN)/image/root -modules modules -out $(BIN)/image \
		-tag '$(IMAGE_TAG)' -version '$(VERSION)' -revision "$$(git rev-parse HEAD 2>/dev/null || echo unknown)" -source '$(IMAGE_SOURCE)'

# oauth2-proxy: the relying party of the OpenID Connect provider's tests,
# built from the Go module proxy at a pinned version into $(BIN) (no Debian
# package has it). ci-deps fails when it cannot be built; deps says so and
# goes on (those tests skip, and fail under CI=true: internal/testenv).
OAUTH2_PROXY_VERSION := v7.15.6
oauth2-proxy:
	@mkdir -p $(BIN)
	@if [ -x $(BIN)/oauth2-proxy ] && $(BIN)/oauth2-proxy --version 2>&1 | grep -q "$(OAUTH2_PROXY_VERSION)"; then exit 0; fi; \
	echo "building oauth2-proxy $(OAUTH2_PROXY_VERSION) into $(BIN) (tests of the OpenID Connect provider)"; \
	GOBIN=$(abspath $(BIN)) GOFLAGS=-buildvcs=false $(GO) install -ldflags "-X github.com/oauth2-proxy/oauth2-proxy/v7/pkg/version.VERSION=$(OAUTH2_PROXY_VERSION)" github.com/oauth2-proxy/oauth2-proxy/v7@$(OAUTH2_PROXY_VERSION)

# ci-deps installs what the tests need on a fresh machine (MISSING_PKGS,
# the S3 test server, oauth2-proxy), and fails when it cannot. Go modules
# come from the module proxy.
ci-deps: oauth2-proxy
	@[ "$(TOXGATE_TEST_DEPS)" = off ] || $(MAKE) --no-print-directory s3-server
	@[ "$(TOXGATE_TEST_DEPS)" = off ] || $(MAKE) --no-print-directory helm
	@PKGS="$(MISSING_PKGS)"; \
	if [ -n "$$PKGS" ]; then \
		echo "installing $$PKGS (browser tests, Rust example module, wasm optimiser, DataStore tests, DCAT tests' RDF parser)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$PKGS >/dev/null; \
	fi
	$(GO) mod download
	$(GO) build -o /dev/null tool

# deps is ci-deps for make test: it installs MISSING_PKGS when it may (as root,
# or with password-less sudo, on a system with apt-get) and otherwise says so
# and goes on; the tests that need what is missing then skip, and make test
# names them at the end; it also builds the S3 test server (s3-server).
# TOXGATE_TEST_DEPS=off installs and builds nothing.
deps:
	@[ "$(TOXGATE_TEST_DEPS)" = off ] || $(MAKE) --no-print-directory s3-server || \
		echo "note: building versitygw failed: the S3 file store tests skip (summary at the end)"
	@[ "$(TOXGATE_TEST_DEPS)" = off ] || $(MAKE) --no-print-directory helm || \
		echo "note: building helm failed: the chart tests (deploy/) skip (summary at the end)"
	@if [ "$(TOXGATE_TEST_DEPS)" != off ]; then $(MAKE) --no-print-directory oauth2-proxy || echo "note: building oauth2-proxy failed: the OpenID Connect relying-party tests skip (summary at the end)"; fi
	@PKGS="$(MISSING_PKGS)"; \
	if [ -z "$$PKGS" ] || [ "$(TOXGATE_TEST_DEPS)" = off ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "note: the tests want the Debian packages $$PKGS and there is no apt-get: those tests skip (summary at the end)"; exit 0; \
	fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; else \
		echo "note: the tests want the Debian packages $$PKGS; not root and no password-less sudo, so not installing them (make ci-deps as root does): those tests skip (summary at the end)"; exit 0; \
	fi; \
	echo "installing $$PKGS for the tests (TOXGATE_TEST_DEPS=off skips this)"; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$PKGS >/dev/null || \
		echo "note: installing $$PKGS failed: those tests skip (summary at the end)"

clean:
	rm -rf $(BIN)
