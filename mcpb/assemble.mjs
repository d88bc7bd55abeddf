#!/usr/bin/env node
// assemble.mjs builds the MCP Bundles of a release from GoReleaser's dist
// directory: one mnemo-OS-ARCH.mcpb per platform, the binary server type
// with mcpb/manifest.json at the release's version, validated and packed
// with the @anthropic-ai/mcpb CLI pinned in mcpb/package.json.
//
//   node mcpb/assemble.mjs DIST OUT [host|all]
//
// DIST is GoReleaser's output (metadata.json for the version,
// artifacts.json for the binaries); OUT receives one directory per bundle
// under OUT/bundles and the .mcpb files: this machine's platform (host,
// the default) or all six (all). Claude Desktop installs a .mcpb in one
// click; the user_config fields are what it asks for.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { binaryPath, releaseBinaries } from "../npm/artifacts.mjs";

const here = dirname(fileURLToPath(import.meta.url));
// The mcpb CLI pinned in mcpb/package.json (2.1.2 writes and validates
// manifest_version 0.4), installed with npm install --prefix mcpb.
const mcpbCLI = join(here, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js");
const root = resolve(here, "..");
// Node's platform names, which the manifest's compatibility uses.
const hostOS = { linux: "linux", darwin: "darwin", windows: "win32" };
const hostCPU = { amd64: "x64", arm64: "arm64" };

function die(message) {
  process.stderr.write(`mcpb assemble: ${message}\n`);
  process.exit(1);
}

const [dist, out, which = "host"] = process.argv.slice(2);
if (!dist || !out || !["host", "all"].includes(which)) {
  die("usage: node mcpb/assemble.mjs DIST OUT [host|all]");
}
const readJSON = (file) => {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    die(`read ${file}: ${err.message} (is ${dist} GoReleaser's dist directory?)`);
  }
};
const version = readJSON(join(dist, "metadata.json")).version;
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version || "")) {
  die(`version ${JSON.stringify(version)} in ${dist}/metadata.json is not a semver version`);
}
const binaries = releaseBinaries(dist);
const template = readJSON(join(here, "manifest.json"));

if (!existsSync(mcpbCLI)) {
  die(`the mcpb CLI is not installed (${mcpbCLI}); run: npm install --prefix mcpb`);
}
const mcpb = (...args) =>
  execFileSync(process.execPath, [mcpbCLI, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });

const bundlesDir = join(out, "bundles");
rmSync(bundlesDir, { recursive: true, force: true });
mkdirSync(bundlesDir, { recursive: true });
for (const goos of Object.keys(hostOS)) {
  for (const goarch of Object.keys(hostCPU)) {
    if (which === "host" && (hostOS[goos] !== process.platform || hostCPU[goarch] !== process.arch)) {
      continue;
    }
    const src = binaryPath(binaries, root, dist, goos, goarch, die);
    const exe = goos === "windows" ? "mnemo.exe" : "mnemo";
    const dir = join(bundlesDir, `mnemo-${goos}-${goarch}`);
    mkdirSync(join(dir, "server"), { recursive: true });
    copyFileSync(src, join(dir, "server", exe));
    chmodSync(join(dir, "server", exe), 0o755);
    copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
    const manifest = structuredClone(template);
    manifest.version = version;
    manifest.server.entry_point = `server/${exe}`;
    manifest.server.mcp_config.command = `\${__dirname}/server/${exe}`;
    manifest.compatibility.platforms = [hostOS[goos]];
    writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
    mcpb("validate", join(dir, "manifest.json"));
    const file = join(resolve(out), `mnemo-${goos}-${goarch}.mcpb`);
    rmSync(file, { force: true });
    mcpb("pack", dir, file);
    process.stdout.write(`packed ${file}\n`);
  }
}
