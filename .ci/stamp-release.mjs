#!/usr/bin/env node
// .ci/stamp-release.mjs VERSION — writes the release's version into the
// metadata kept in the repository at 0.0.0: server.json (the server, its
// npm package and its image tags), npm/mnemo/package.json and
// mcpb/manifest.json. The release workflow runs it at the tag, then
// TestReleaseMetadata (go test -run TestReleaseMetadata .) checks that they
// agree before anything is published.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const version = (process.argv[2] || "").replace(/^v/, "");
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) {
  process.stderr.write("usage: node .ci/stamp-release.mjs VERSION (a semver version, e.g. 1.2.3 or v1.2.3)\n");
  process.exit(2);
}
const image = "ghcr.io/mnemo-mcp/mnemo";

function edit(file, change) {
  const path = join(root, file);
  const doc = JSON.parse(readFileSync(path, "utf8"));
  change(doc);
  writeFileSync(path, JSON.stringify(doc, null, 2) + "\n");
  process.stdout.write(`${file}: ${version}\n`);
}

edit("server.json", (s) => {
  s.version = version;
  for (const p of s.packages) {
    if (p.registryType === "npm") {
      p.version = version;
    } else if (p.registryType === "oci") {
      p.identifier = `${image}:${version}`;
    }
  }
});
edit("npm/mnemo/package.json", (p) => {
  p.version = version;
});
edit("mcpb/manifest.json", (m) => {
  m.version = version;
});
