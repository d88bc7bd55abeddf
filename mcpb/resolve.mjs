#!/usr/bin/env node
// resolve.mjs DIR [KEY=VALUE...] prints, as JSON, the command, arguments
// and environment a host runs for the bundle unpacked in DIR, with the
// user_config answers given (the others at their defaults). It resolves
// them with the mcpb package's own getMcpConfigForManifest, as its
// reference implementation of a host does; .ci/release-smoke.sh runs what
// it prints.
import { readFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const lib = join(here, "node_modules", "@anthropic-ai", "mcpb", "dist", "index.js");
const { getMcpConfigForManifest } = await import(pathToFileURL(lib).href);

const [dir, ...answers] = process.argv.slice(2);
if (!dir) {
  process.stderr.write("usage: node mcpb/resolve.mjs DIR [KEY=VALUE...]\n");
  process.exit(2);
}
const userConfig = Object.fromEntries(answers.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: { HOME: process.env.HOME || "", DESKTOP: "", DOCUMENTS: "", DOWNLOADS: "" },
  userConfig,
  pathSeparator: sep,
});
if (!config) {
  process.stderr.write("the bundle gives no server configuration (a required user_config is missing?)\n");
  process.exit(1);
}
process.stdout.write(JSON.stringify({ command: config.command, args: config.args || [], env: config.env || {} }) + "\n");
