#!/usr/bin/env bash
# .ci/release-smoke.sh OUTDIR — builds the release the way users get it and
# runs what it built (issue 28):
#   1. GoReleaser snapshot: 6 archives (linux, darwin, windows × amd64,
#      arm64), the checksums file and the Homebrew cask, in OUTDIR/dist; the
#      archives and checksums are copied to OUTDIR. This platform's binary
#      must print the stamped version and commit.
#   2. npm: the launcher and this platform's binary package packed as
#      OUTDIR/*.tgz (npm/assemble.mjs), installed into an empty npm prefix;
#      its bin answers an MCP initialize and tools/list, keeps exit statuses
#      and passes signals on (.ci/mcp-stdio.py launcher).
#      Setup from the launcher writes npx by its absolute path and the
#      pinned version; that entry starts mnemo in a bare environment; through
#      npx, messages name npx -y @mnemo-mcp/mnemo (issue 44).
#   3. The MCP Bundle OUTDIR/mnemo-OS-ARCH.mcpb of this platform
#      (mcpb/assemble.mjs, validated and packed by the mcpb CLI pinned in
#      mcpb/package.json), unpacked; its entry, as the mcpb package resolves
#      it for a host, answers initialize and tools/list.
#   4. The container image, built from scratch with buildah and exported as
#      OUTDIR/mnemo_VERSION_linux_ARCH_image.tar (OCI archive), checked with
#      skopeo; where this machine can run containers, podman runs it and it
#      answers initialize on stdio and mnemo doctor passes in it; /data's
#      mode (0700) and owner are read from the image's layers.
# Installs buildah, skopeo, podman and runc from Debian's packages when
# missing. Needs Go, node/npm, python3 and the Go module proxy.
set -euo pipefail

if [[ $# -ne 1 ]]; then
	echo "usage: .ci/release-smoke.sh OUTDIR" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
ROOT=$PWD
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
GORELEASER=github.com/goreleaser/goreleaser/v2@v2.16.0 # newest that builds with Go 1.26
export GOTOOLCHAIN=local
export npm_config_loglevel=error npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-release.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
T0=$SECONDS
say() { printf '\n-- %s (%ss)\n' "$*" $((SECONDS - T0)); }

deps() {
	local missing=()
	for tool in buildah skopeo podman runc; do
		command -v "$tool" >/dev/null || missing+=("$tool")
	done
	((${#missing[@]} == 0)) && return
	echo "installing: ${missing[*]}"
	local sudo=()
	[[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

say "dependencies (buildah, skopeo, podman, runc)"
deps

say "GoReleaser snapshot ($GORELEASER)"
rm -rf "$OUT/dist" "$OUT"/mnemo_*
# The same configuration, writing into OUTDIR instead of ./dist.
{ cat .goreleaser.yaml; printf '\ndist: %s\n' "$OUT/dist"; } >"$WORK/goreleaser.yaml"
# GoReleaser reads the commit only in a clone with a remote; a checkout
# without one (a local worktree) is given the project's URL for this run
# alone, through git's environment, not its configuration.
if [[ -z $(git remote) ]]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/mnemo-mcp/mnemo.git
fi
go run "$GORELEASER" release --snapshot --clean --config "$WORK/goreleaser.yaml" >"$WORK/goreleaser.log" 2>&1 || {
	cat "$WORK/goreleaser.log" >&2
	exit 1
}
unset GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0
grep -E 'release succeeded|WARN|DEPRECATED' "$WORK/goreleaser.log" || true
VERSION=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$OUT/dist/metadata.json")
COMMIT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"])' "$OUT/dist/metadata.json")
cd "$OUT/dist"
archives=(mnemo_*_*.tar.gz mnemo_*_*.zip)
if [[ ${#archives[@]} -ne 6 ]]; then
	echo "want 6 archives, have ${#archives[@]}: ${archives[*]}" >&2
	exit 1
fi
sha256sum --quiet -c mnemo_checksums.txt
cp "${archives[@]}" mnemo_checksums.txt "$OUT/"
# The cask names the darwin and linux archives with their checksums.
python3 - homebrew/Casks/mnemo.rb mnemo_checksums.txt <<'PY'
import re, sys
cask = open(sys.argv[1]).read()
sums = {name: digest for digest, name in (l.split() for l in open(sys.argv[2]))}
pairs = re.findall(r'sha256 "([0-9a-f]{64})"\s+url "[^"]*/([^/"]+)"', cask)
assert sorted(n for _, n in pairs) == sorted(n for n in sums if "windows" not in n), pairs
for digest, name in pairs:
    assert sums[name] == digest, (name, digest, sums[name])
assert 'binary "mnemo"' in cask, cask
print(f"cask: {len(pairs)} archives, checksums match")
PY
cd "$ROOT"
ls -l "${archives[@]/#/$OUT/}" "$OUT/mnemo_checksums.txt" | awk '{printf "%10d  %s\n", $5, $NF}'

GOOS=$(go env GOOS)
GOARCH=$(go env GOARCH)
mkdir -p "$WORK/archive"
tar -xzf "$OUT/mnemo_${GOOS}_${GOARCH}.tar.gz" -C "$WORK/archive"
BIN=$WORK/archive/mnemo
got=$("$BIN" version)
want="mnemo v$VERSION (${COMMIT:0:12})"
if [[ $got != "$want" ]]; then
	echo "mnemo version = '$got', want '$want'" >&2
	exit 1
fi
echo "$got"

say "npm launcher: assemble, pack, install into an empty prefix"
rm -f "$OUT"/*.tgz
node npm/assemble.mjs "$OUT/dist" "$WORK/npm" --pack host
cp "$WORK"/npm/*.tgz "$OUT/"
TGZ=("$OUT"/*.tgz)
ls -l "$OUT"/*.tgz | awk '{printf "%10d  %s\n", $5, $NF}'
PREFIX=$WORK/prefix
mkdir -p "$PREFIX"
# The other platforms' packages are optional dependencies that are not
# published: npm skips them (offline, they cannot be fetched).
(cd "$PREFIX" && npm install --offline --no-save --no-package-lock "${TGZ[@]}" >"$WORK/npm.log" 2>&1) || {
	cat "$WORK/npm.log" >&2
	exit 1
}
LAUNCHER=$PREFIX/node_modules/.bin/mnemo
"$LAUNCHER" version
python3 .ci/mcp-stdio.py initialize --tools -- "$LAUNCHER" serve --data-dir "$WORK/npm-data"
python3 .ci/mcp-stdio.py launcher "$LAUNCHER" "$BIN" "$WORK/npm-data"
# Run from the launcher, setup writes an npx entry by itself (issue 44):
# npx by its absolute path, node's directory first on its PATH, the
# package pinned to this version, and it says why.
HOME=$WORK/home "$LAUNCHER" setup claude-desktop --print --data-dir "$WORK/npm-data" >"$WORK/setup.json" 2>"$WORK/setup.err"
python3 - "$WORK/setup.json" "$WORK/npm-data" "$VERSION" "$WORK/setup.err" <<'PY'
import json, os, sys
entry = json.load(open(sys.argv[1]))["mcpServers"]["mnemo"]
data, version, notes = sys.argv[2], sys.argv[3], open(sys.argv[4]).read()
assert entry["args"] == ["-y", f"@mnemo-mcp/mnemo@{version}", "serve", "--data-dir", data], entry
npx = entry["command"]
assert os.path.isabs(npx) and os.access(npx, os.X_OK), f"command {npx!r} is not an absolute, executable npx"
first = entry["env"]["PATH"].split(os.pathsep)[0]
assert os.access(os.path.join(first, "node"), os.X_OK), f"PATH {entry['env']['PATH']!r} does not start with node's directory"
for why in (f"pinned to @mnemo-mcp/mnemo@{version}", "minimal PATH"):
    assert why in notes, (why, notes)
print("setup from the launcher:", json.dumps(entry))
PY
# And npx itself, from the packed tarballs, with a cache of its own.
npm_config_cache=$WORK/npm-cache npx --offline -y "${TGZ[@]/#/--package=}" -- mnemo version
# The entry's command and PATH start mnemo in an environment as bare as a
# host's (the package given as the tarballs: it is not published here).
python3 - "$WORK/setup.json" "$WORK/npm-cache" "$WORK/entry-data" "${TGZ[@]}" <<'PY'
import json, os, sys
entry = json.load(open(sys.argv[1]))["mcpServers"]["mnemo"]
cache, data, tgz = sys.argv[2], sys.argv[3], sys.argv[4:]
env = {"PATH": entry["env"]["PATH"], "HOME": os.path.dirname(data), "npm_config_cache": cache}
cmd = [entry["command"], "--offline", "-y", *[f"--package={t}" for t in tgz], "--", "mnemo", "serve", "--data-dir", data]
os.execve(sys.executable, [sys.executable, ".ci/mcp-stdio.py", "initialize", "--", *cmd], env)
PY
# Messages name the command as typed through npx (issue 44).
code=0
npm_config_cache=$WORK/npm-cache npx --offline -y "${TGZ[@]/#/--package=}" -- mnemo servee 2>"$WORK/servee.err" || code=$?
if [[ $code -ne 2 ]] || ! grep -q "did you mean 'npx -y @mnemo-mcp/mnemo serve'" "$WORK/servee.err"; then
	echo "npx ... mnemo servee: exit $code, want 2 and a suggestion naming npx:" >&2
	cat "$WORK/servee.err" >&2
	exit 1
fi
head -n 1 "$WORK/servee.err"

say "MCP Bundle: mcpb validate and pack, unpack, initialize"
# The mcpb CLI pinned in mcpb/package.json, from the npm registry.
npm install --prefix mcpb --no-save --no-package-lock >"$WORK/mcpb-npm.log" 2>&1 || {
	cat "$WORK/mcpb-npm.log" >&2
	exit 1
}
MCPB=(node mcpb/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js)
rm -f "$OUT"/*.mcpb
node mcpb/assemble.mjs "$OUT/dist" "$WORK/mcpb" host
cp "$WORK"/mcpb/*.mcpb "$OUT/"
BUNDLE=$OUT/mnemo-${GOOS}-${GOARCH}.mcpb
ls -l "$BUNDLE" | awk '{printf "%10d  %s\n", $5, $NF}'
"${MCPB[@]}" info "$BUNDLE" | grep -v '^$' | head -n 8
"${MCPB[@]}" unpack "$BUNDLE" "$WORK/bundle" >/dev/null
python3 - "$WORK/bundle" "$VERSION" <<'PY'
import json, os, sys
d, version = sys.argv[1:3]
m = json.load(open(os.path.join(d, "manifest.json")))
assert m["manifest_version"] == "0.4" and m["version"] == version, (m["manifest_version"], m["version"])
assert m["server"]["type"] == "binary", m["server"]
entry = os.path.join(d, m["server"]["entry_point"])
assert os.path.isfile(entry), entry
uc = m["user_config"]
assert uc["data_dir"]["type"] == "directory" and uc["llm_api_key"]["sensitive"] is True, uc
print(f"bundle: manifest {m['manifest_version']}, {m['name']} {m['version']}, entry {m['server']['entry_point']}, user_config {sorted(uc)}")
PY
if [[ ! -x $WORK/bundle/server/mnemo ]]; then
	echo "the bundle's entry is not executable once unpacked" >&2
	exit 1
fi
# Its entry answers initialize as a host starts it: the configuration
# resolved by the mcpb package's own getMcpConfigForManifest, in a bare
# environment; once with the data directory answered, once with nothing.
for answers in "data_dir=$WORK/bundle-data" ""; do
	# shellcheck disable=SC2086 # an empty $answers is no argument
	node mcpb/resolve.mjs "$WORK/bundle" $answers >"$WORK/bundle-config.json"
	python3 - "$WORK/bundle-config.json" "$WORK/bundle-home" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
print("bundle runs:", c["command"], *c["args"], json.dumps(c["env"]))
env = {"PATH": "/usr/bin:/bin", "HOME": sys.argv[2], **c["env"]}
os.execve(sys.executable, [sys.executable, ".ci/mcp-stdio.py", "initialize", "--tools", "--", c["command"], *c["args"]], env)
PY
done

say "container image: buildah from scratch, OCI archive"
IMAGE_ARCHIVE=$OUT/mnemo_${VERSION}_linux_${GOARCH}_image.tar
CTX=$WORK/image
# /data is private to the image's user, as mnemo doctor wants the memory
# (issue 41, low 9); /tmp is the usual sticky, world-writable one.
mkdir -p "$CTX/rootfs/data" "$CTX/rootfs/tmp"
chmod 0700 "$CTX/rootfs/data"
chmod 1777 "$CTX/rootfs/tmp"
cp "$OUT/dist/mnemo_linux_${GOARCH}"*/mnemo "$CTX/mnemo"
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
	cp /etc/ssl/certs/ca-certificates.crt "$CTX/"
else
	: >"$CTX/ca-certificates.crt"
fi
# Storage of its own (vfs: no overlay mounts needed) and chroot isolation:
# a FROM scratch build runs nothing inside the image.
STORE=(--storage-driver vfs --root "$WORK/containers" --runroot "$WORK/containers-run")
buildah "${STORE[@]}" build --isolation chroot --quiet -f Containerfile \
	--label "org.opencontainers.image.version=$VERSION" --label "org.opencontainers.image.revision=$COMMIT" \
	-t "localhost/mnemo:$VERSION" "$CTX" >/dev/null
rm -f "$IMAGE_ARCHIVE"
buildah "${STORE[@]}" push --quiet "localhost/mnemo:$VERSION" "oci-archive:$IMAGE_ARCHIVE:mnemo:$VERSION"
skopeo inspect --config "oci-archive:$IMAGE_ARCHIVE" >"$WORK/image-config.json"
python3 - "$WORK/image-config.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))["config"]
assert cfg["User"] == "65532:65532", cfg
assert cfg["Entrypoint"] == ["/mnemo"] and cfg["Cmd"] == ["serve"], cfg
assert "MNEMO_DATA_DIR=/data" in cfg["Env"], cfg
assert "/data" in cfg["Volumes"], cfg
# The MCP Registry checks that server.json's image is this server's.
assert cfg["Labels"]["io.modelcontextprotocol.server.name"] == "io.github.mnemo-mcp/mnemo", cfg["Labels"]
print("image config: user", cfg["User"], "entrypoint", cfg["Entrypoint"], "cmd", cfg["Cmd"], "volumes", list(cfg["Volumes"]))
PY
# The layers as shipped: /data is a directory of mode 0700 owned by the
# image's user, /tmp 1777 (read from the OCI archive, so checked also where
# containers cannot run).
python3 - "$IMAGE_ARCHIVE" <<'PY'
import io, json, stat, sys, tarfile
oci = tarfile.open(sys.argv[1])
def blob(digest):
    return oci.extractfile("blobs/" + digest.replace(":", "/")).read()
index = json.loads(oci.extractfile("index.json").read())
manifest = json.loads(blob(index["manifests"][0]["digest"]))
seen = {}
for layer in manifest["layers"]:
    with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as t:
        for m in t.getmembers():
            name = m.name.lstrip("./").rstrip("/")
            if name in ("data", "tmp"):
                seen[name] = m
want = {"data": (0o700, 65532, 65532), "tmp": (0o1777, 65532, 65532)}
for name, (mode, uid, gid) in want.items():
    m = seen.get(name)
    assert m is not None and m.isdir(), f"/{name} is not a directory in the image's layers"
    got = (stat.S_IMODE(m.mode), m.uid, m.gid)
    assert got == (mode, uid, gid), f"/{name}: mode {got[0]:04o} owner {got[1]}:{got[2]}, want {mode:04o} {uid}:{gid}"
    print(f"image layer: /{name} mode {got[0]:04o} owner {got[1]}:{got[2]}")
PY
ls -l "$IMAGE_ARCHIVE" | awk '{printf "%10d  %s\n", $5, $NF}'

say "container image: podman run -i (where this machine can run containers)"
# Explicit ulimits and cgroupfs: sandboxes often refuse raising limits and
# have no systemd; the image needs no network.
RUN=(podman "${STORE[@]}" --cgroup-manager cgroupfs run --rm -i --network none
	--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
if ! "${RUN[@]}" --entrypoint /mnemo "localhost/mnemo:$VERSION" version >"$WORK/podman.out" 2>"$WORK/podman.err"; then
	if "${RUN[@]}" --runtime runc --entrypoint /mnemo "localhost/mnemo:$VERSION" version >"$WORK/podman.out" 2>"$WORK/podman.err"; then
		RUN+=(--runtime runc)
	else
		echo "SKIPPED running the image: this machine cannot run containers ($(tail -n 1 "$WORK/podman.err"))"
		RUN=()
	fi
fi
if ((${#RUN[@]})); then
	cat "$WORK/podman.out"
	python3 .ci/mcp-stdio.py initialize --tools -- "${RUN[@]}" "localhost/mnemo:$VERSION"
	# mnemo doctor passes in the image as shipped: on the anonymous volume
	# of VOLUME /data, and on a named volume as the README runs it (issue
	# 41, low 9: /data was 0755, and doctor failed on it).
	"${RUN[@]}" "localhost/mnemo:$VERSION" doctor >"$WORK/doctor.out" 2>&1 || {
		cat "$WORK/doctor.out" >&2
		echo "mnemo doctor fails in the image (anonymous /data volume)" >&2
		exit 1
	}
	grep -q 'mode 0700' "$WORK/doctor.out"
	VOL=mnemo-smoke-$$
	"${RUN[@]}" -v "$VOL:/data" "localhost/mnemo:$VERSION" doctor >"$WORK/doctor-volume.out" 2>&1 || {
		cat "$WORK/doctor-volume.out" >&2
		echo "mnemo doctor fails in the image (named volume $VOL:/data)" >&2
		podman "${STORE[@]}" volume rm -f "$VOL" >/dev/null 2>&1 || true
		exit 1
	}
	podman "${STORE[@]}" volume rm -f "$VOL" >/dev/null
	echo "mnemo doctor in the image: all checks passed (anonymous and named /data volumes)"
fi

say "done: $OUT"
