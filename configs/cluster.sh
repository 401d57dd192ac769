#!/usr/bin/env bash
# make cluster: three gateways on one PostgreSQL (catalog store and
# DataStore) and one S3 bucket (versitygw), behind HAProxy checking each on
# /readyz, all on loopback in a temporary directory. Ctrl-C stops them all
# and removes the directory. BIN is the build directory (make build).
#
#   http://127.0.0.1:8080        the balancer (the cluster)
#   http://127.0.0.1:8081..8083  the gateways themselves
#   http://127.0.0.1:8404/stats  HAProxy's view of them
set -euo pipefail
BIN=${BIN:-bin}
BIN=$(cd "$BIN" && pwd)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] || { echo "no PostgreSQL (apt-get install postgresql, or make ci-deps)"; exit 1; }
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
[ -x "$HAPROXY" ] || { echo "no haproxy (apt-get install haproxy, or make ci-deps)"; exit 1; }
[ -x "$BIN/tools/versitygw" ] || { echo "no versitygw in $BIN/tools (make s3-server)"; exit 1; }

DIR=$(mktemp -d /tmp/toxgate-cluster-XXXXXX)
chmod 755 "$DIR"
PIDS=()
stop() {
	trap - EXIT INT TERM
	echo; echo "stopping"
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -f "$DIR/pg/postmaster.pid" ] && { ${PGRUN:-} "$PGBIN/pg_ctl" -D "$DIR/pg" -m fast stop >/dev/null 2>&1 || true; }
	rm -rf "$DIR"
	exit 0
}
trap stop EXIT INT TERM

# PostgreSQL refuses to run as root: then it runs as the postgres user
PGRUN=""
if [ "$(id -u)" = 0 ]; then PGRUN="runuser -u postgres --"; mkdir -p "$DIR/pg"; chown postgres "$DIR/pg"; fi
$PGRUN "$PGBIN/initdb" -D "$DIR/pg" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
$PGRUN "$PGBIN/pg_ctl" -D "$DIR/pg" -l "$DIR/pg/log" -o "-p 54329 -k $DIR/pg -h 127.0.0.1 -c max_connections=300" -w start >/dev/null
for db in toxgate datastore; do "$PGBIN/psql" -q -h 127.0.0.1 -p 54329 -U postgres -c "CREATE DATABASE $db" postgres; done
PG=postgres://postgres@127.0.0.1:54329

mkdir -p "$DIR/buckets/toxgate" "$DIR/s3-sidecar"
"$BIN/tools/versitygw" --access cluster --secret cluster-secret --port 127.0.0.1:7070 --quiet \
	posix --sidecar "$DIR/s3-sidecar" "$DIR/buckets" >"$DIR/versitygw.log" 2>&1 &
PIDS+=($!)

# start_gateway N: gateway N on 127.0.0.1:808N
start_gateway() {
	local i=$1
	mkdir -p "$DIR/gw$i"
	env TOXGATE_SERVER_ADDR=127.0.0.1:808$i TOXGATE_SERVER_PUBLIC_URL=http://127.0.0.1:8080 \
		TOXGATE_SERVER_TRUSTED_PROXIES=127.0.0.1 \
		TOXGATE_STORE_BACKEND=postgresql TOXGATE_STORE_POSTGRES_URL="$PG/toxgate?sslmode=disable" \
		TOXGATE_DATASTORE_URL="$PG/datastore?sslmode=disable" \
		TOXGATE_MONGODB_DATA_DIR="$DIR/gw$i/store" \
		TOXGATE_FILES_BACKEND=s3 TOXGATE_FILES_S3_BUCKET=toxgate TOXGATE_FILES_S3_ENDPOINT=http://127.0.0.1:7070 \
		TOXGATE_FILES_S3_PATH_STYLE=true TOXGATE_FILES_S3_ACCESS_KEY_ID=cluster TOXGATE_FILES_S3_SECRET_ACCESS_KEY=cluster-secret \
		TOXGATE_MODULES_DIR="$BIN/modules" TOXGATE_PLUGINS_PROGRAMS="catalog=$BIN/toxgate-catalog" \
		TOXGATE_AUTH_ADMIN_PASSWORD="${TOXGATE_AUTH_ADMIN_PASSWORD:-}" \
		"$BIN/toxgate" >"$DIR/gw$i.out" 2>"$DIR/gw$i.log" &
	PIDS+=($!)
}
alive() { for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || { echo "a process exited:"; for f in "$DIR"/*.log; do echo "== $f"; tail -n 5 "$f"; done; exit 1; }; done; }

# The first gateway compiles every model module into the shared compilation
# cache (modules.cache_dir, ./data/wazero-cache); the others start once it
# is ready and load the compiled code from there instead of compiling it
# three times over.
start_gateway 1
echo "starting gateway 1 (the first start compiles every model module; later starts load them from ./data/wazero-cache)"
until curl -fsS -o /dev/null http://127.0.0.1:8081/readyz 2>/dev/null; do alive; sleep 1; done
start_gateway 2
start_gateway 3

# the balancer's configuration: deploy/haproxy/haproxy.cfg.tmpl with its
# placeholders filled in
SERVERS=""
for i in 1 2 3; do SERVERS+="  server g$i 127.0.0.1:808$i check cookie g$i"$'\n'; done
TMPL=$(cat "$(dirname "$0")/../deploy/haproxy/haproxy.cfg.tmpl")
TMPL=${TMPL//'${FRONTEND}'/127.0.0.1:8080}
TMPL=${TMPL//'${STATS}'/127.0.0.1:8404}
printf '%s\n' "${TMPL//'${SERVERS}'/$SERVERS}" >"$DIR/haproxy.cfg"
"$HAPROXY" -db -f "$DIR/haproxy.cfg" >"$DIR/haproxy.log" 2>&1 &
PIDS+=($!)

echo "cluster in $DIR: PostgreSQL :54329, versitygw :7070, gateways :8081-8083 (logs gw*.log), HAProxy :8080 (stats :8404/stats)"
echo "the first gateway to start prints the admin password: see $DIR/gw*.out"
echo "waiting for the balancer to see all three ready (Ctrl-C stops everything)"
until curl -fsS "http://127.0.0.1:8404/stats;csv" 2>/dev/null | awk -F, '$1=="gateways" && $2 ~ /^g/ && $18=="UP"' | wc -l | grep -q 3; do
	alive
	sleep 1
done
echo "ready: http://127.0.0.1:8080"
grep -h "password" "$DIR"/gw*.out 2>/dev/null || true
wait
