#!/usr/bin/env node
// assemble.mjs builds the npm packages of a release from GoReleaser's dist
// directory: the launcher @mnemo-mcp/mnemo and one package per platform
// holding that platform's binary, all at the release's version.
//
//   node npm/assemble.mjs DIST OUT [--pack host|all]
//
// DIST is GoReleaser's output (it reads metadata.json for the version and
// artifacts.json for the binaries); OUT receives one directory per package
// under OUT/packages and, with --pack, the npm pack tarballs: the launcher
// and either this machine's platform package (host) or all six (all).
// Publishing is "npm publish" of each platform tarball, then the launcher's.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { binaryPath, releaseBinaries } from "./artifacts.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const scope = "@mnemo-mcp";
const npmOS = { linux: "linux", darwin: "darwin", windows: "win32" };
const npmCPU = { amd64: "x64", arm64: "arm64" };

function die(message) {
  process.stderr.write(`assemble: ${message}\n`);
  process.exit(1);
}

const [dist, out, ...rest] = process.argv.slice(2);
if (!dist || !out) {
  die("usage: node npm/assemble.mjs DIST OUT [--pack host|all]");
}
let pack = "";
if (rest.length) {
  if (rest[0] !== "--pack" || !["host", "all"].includes(rest[1])) {
    die(`unexpected arguments ${rest.join(" ")}; want --pack host or --pack all`);
  }
  pack = rest[1];
}

const readJSON = (file) => {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    die(`read ${file}: ${err.message} (is ${dist} GoReleaser's dist directory?)`);
  }
};
const meta = readJSON(join(dist, "metadata.json"));
const version = meta.version;
if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version || "")) {
  die(`version ${JSON.stringify(version)} in ${dist}/metadata.json is not a semver version npm accepts`);
}

// GoReleaser records artifact paths relative to the directory it ran in,
// the repository root.
const root = resolve(here, "..");
const binaries = releaseBinaries(dist);

const launcher = JSON.parse(readFileSync(join(here, "mnemo", "package.json"), "utf8"));
const license = join(root, "LICENSE");
const packagesDir = join(out, "packages");
rmSync(packagesDir, { recursive: true, force: true });
mkdirSync(packagesDir, { recursive: true });

const platforms = [];
for (const goos of Object.keys(npmOS)) {
  for (const goarch of Object.keys(npmCPU)) {
    const os = npmOS[goos];
    const cpu = npmCPU[goarch];
    const name = `${scope}/mnemo-${os}-${cpu}`;
    const src = binaryPath(binaries, root, dist, goos, goarch, die);
    const exe = goos === "windows" ? "mnemo.exe" : "mnemo";
    const dir = join(packagesDir, `mnemo-${os}-${cpu}`);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(src, join(dir, "bin", exe));
    chmodSync(join(dir, "bin", exe), 0o755);
    copyFileSync(license, join(dir, "LICENSE"));
    const manifest = {
      name,
      version,
      description: `The mnemo binary for ${os} on ${cpu}, run by ${launcher.name}`,
      homepage: launcher.homepage,
      repository: launcher.repository,
      license: launcher.license,
      os: [os],
      cpu: [cpu],
      files: [`bin/${exe}`],
      preferUnplugged: true,
    };
    writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
    writeFileSync(
      join(dir, "README.md"),
      `# ${name}\n\nThe mnemo ${version} binary for ${os} on ${cpu}. Install ${launcher.name} instead: it depends on this package on this platform and runs the binary.\n`,
    );
    platforms.push({ name, os, cpu, dir });
  }
}

const main = { ...launcher, version, optionalDependencies: {} };
for (const p of platforms.map((p) => p.name).sort()) {
  main.optionalDependencies[p] = version;
}
if (Object.keys(launcher.optionalDependencies).sort().join() !== Object.keys(main.optionalDependencies).join()) {
  die("npm/mnemo/package.json's optionalDependencies differ from the platforms assembled");
}
const mainDir = join(packagesDir, "mnemo");
cpSync(join(here, "mnemo"), mainDir, { recursive: true });
chmodSync(join(mainDir, "bin", "mnemo.js"), 0o755);
copyFileSync(license, join(mainDir, "LICENSE"));
copyFileSync(join(root, "README.md"), join(mainDir, "README.md"));
writeFileSync(join(mainDir, "package.json"), JSON.stringify(main, null, 2) + "\n");
process.stdout.write(`assembled ${main.name}@${version} and ${platforms.length} platform packages in ${packagesDir}\n`);

if (pack) {
  const host = `${process.platform}-${process.arch}`;
  const chosen = platforms.filter((p) => pack === "all" || `${p.os}-${p.cpu}` === host);
  if (chosen.length === 0) {
    die(`no platform package for this machine (${host})`);
  }
  for (const dir of [...chosen.map((p) => p.dir), mainDir]) {
    const file = execFileSync("npm", ["pack", "--silent", "--pack-destination", resolve(out), dir], { encoding: "utf8" }).trim();
    process.stdout.write(`packed ${join(out, file.split("\n").pop())}\n`);
  }
}
