#!/usr/bin/env bash
# .ci/inspector-http.sh — the MCP Inspector CLI drives mnemo serve --http
# with a bearer token: add_memory, retrieve_memory, forget_memory, and a
# request without the token is refused.
#
# Environment: MNEMO_BIN, when set, is the binary to test (else it is built);
# INSPECTOR overrides the Inspector package (default
# @modelcontextprotocol/inspector@2). Needs node and npx on PATH.
set -euo pipefail

cd "$(dirname "$0")/.."
INSPECTOR=${INSPECTOR:-@modelcontextprotocol/inspector@2}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-inspector-http.XXXXXX")
SERVER_PID=""
cleanup() {
	if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID"
		wait "$SERVER_PID" || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
export npm_config_loglevel=error npm_config_update_notifier=false npm_config_fund=false

BIN=${MNEMO_BIN:-}
if [[ -z $BIN ]]; then
	BIN=$WORK/mnemo
	go build -o "$BIN" .
fi
export MNEMO_DATA_DIR=$WORK/data MNEMO_LOG_LEVEL=warn
TOKEN=$("$BIN" token add --user alice 2>/dev/null)
"$BIN" serve --http 127.0.0.1:0 2>"$WORK/server.log" &
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
[[ -n $URL ]] || { echo "mnemo did not start listening" >&2; exit 1; }
echo "-- mnemo serving $URL"

inspector() {
	timeout 300 npx -y "$INSPECTOR" --cli "$URL" --transport http --header "Authorization: Bearer $TOKEN" "$@"
}

echo "-- tools/call add_memory"
inspector --method tools/call --tool-name add_memory \
	--tool-arg "user_input=My sailing boat is a Contessa 32 called Marlin." \
	--tool-arg "agent_response=Noted: Marlin, a Contessa 32." \
	--tool-arg "thread_id=ci" >"$WORK/add.json"
echo "-- tools/call retrieve_memory"
inspector --method tools/call --tool-name retrieve_memory \
	--tool-arg "query=What is my boat called?" --tool-arg "thread_id=ci" >"$WORK/retrieve.json"
echo "-- tools/call retrieve_memory naming another user"
# The Inspector exits non-zero on an isError result and prints only that.
if inspector --method tools/call --tool-name retrieve_memory \
	--tool-arg "query=boat" --tool-arg "user_id=bob" >"$WORK/other.json" 2>&1; then
	echo "retrieve_memory naming bob with alice's token succeeded" >&2
	cat "$WORK/other.json" >&2
	exit 1
fi
echo "-- tools/call forget_memory"
inspector --method tools/call --tool-name forget_memory --tool-arg "thread_id=ci" >"$WORK/forget.json"
python3 - "$WORK" <<'PY'
import json, os, sys
d = sys.argv[1]
load = lambda n: json.load(open(os.path.join(d, n)))
add = load("add.json")
assert not add.get("isError"), add
sc = add["structuredContent"]
assert sc["scope"]["user_id"] == "alice" and len(sc["turn_ids"]) == 1, sc
turn = sc["turn_ids"][0]
ret = load("retrieve.json")
assert not ret.get("isError"), ret
pages = ret["structuredContent"]["pages"]
assert pages and pages[0]["id"] == turn, pages
assert "Contessa 32 called Marlin" in ret["structuredContent"]["injection"], ret
other = open(os.path.join(d, "other.json")).read()
assert "tool_is_error" in other, other
fg = load("forget.json")
assert not fg.get("isError"), fg
print("add -> retrieve -> refused for another user -> forget: ok", json.dumps(fg["structuredContent"])[:200])
PY
echo "-- without the token"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[[ $code == 401 ]] || { echo "request without a token: status $code, want 401" >&2; exit 1; }
echo "status 401: ok"
