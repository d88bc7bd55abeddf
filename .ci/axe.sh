#!/usr/bin/env bash
# .ci/axe.sh — installs axe-core (the accessibility rules the memory
# viewer's browser test runs in Chromium) from npm into a cache directory,
# once per version, and prints the path of axe.min.js:
#
#   export MNEMO_AXE_JS=$(.ci/axe.sh)
#   go test ./cli/ -run TestUIBrowserTasks
#
# The cache is $MNEMO_AXE_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/mnemo-axe).
set -euo pipefail

VERSION=4.10.3
CACHE=${MNEMO_AXE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mnemo-axe}
JS=$CACHE/node_modules/axe-core/axe.min.js

if [[ ! -f $JS ]] || [[ $(node -p "require('$CACHE/node_modules/axe-core/package.json').version" 2>/dev/null) != "$VERSION" ]]; then
	mkdir -p "$CACHE"
	npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$CACHE" "axe-core@$VERSION" >&2
fi
echo "$JS"
