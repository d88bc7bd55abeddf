// artifacts.mjs — the binaries a GoReleaser run left in DIST, for the npm
// packages (assemble.mjs) and the MCP Bundles (../mcpb/assemble.mjs).

import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

// releaseBinaries lists the binaries of DIST/artifacts.json.
export function releaseBinaries(dist) {
  return JSON.parse(readFileSync(join(dist, "artifacts.json"), "utf8")).filter((a) => a.type === "Binary");
}

// binaryPath returns the path of the goos/goarch binary in binaries (paths
// relative to root), or calls die with what is missing.
export function binaryPath(binaries, root, dist, goos, goarch, die) {
  const art = binaries.find((a) => a.goos === goos && a.goarch === goarch);
  if (!art) {
    die(`no ${goos}/${goarch} binary in ${dist}/artifacts.json`);
  }
  const src = isAbsolute(art.path) ? art.path : join(root, art.path);
  if (!existsSync(src)) {
    die(`${src} (${goos}/${goarch}) is missing`);
  }
  return src;
}
