#!/usr/bin/env node
// mnemo's npm launcher: it finds the mnemo binary of this platform in
// the optional dependency npm installed for it (@mnemo-mcp/mnemo-OS-CPU)
// and runs it. Nothing is downloaded at install or run time. The binary
// gets this process's stdin, stdout and stderr as they are (stdout is the
// MCP channel), the signals sent to this process, and its exit status
// becomes this process's.
"use strict";

const { spawn } = require("node:child_process");
const { existsSync, realpathSync } = require("node:fs");
const { delimiter, dirname, isAbsolute, join } = require("node:path");
const { constants } = require("node:os");
const { isatty } = require("node:tty");

// The platform packages, by Node's process.platform and process.arch.
const packages = {
  "linux x64": "@mnemo-mcp/mnemo-linux-x64",
  "linux arm64": "@mnemo-mcp/mnemo-linux-arm64",
  "darwin x64": "@mnemo-mcp/mnemo-darwin-x64",
  "darwin arm64": "@mnemo-mcp/mnemo-darwin-arm64",
  "win32 x64": "@mnemo-mcp/mnemo-win32-x64",
  "win32 arm64": "@mnemo-mcp/mnemo-win32-arm64",
};

function fail(message) {
  process.stderr.write(`mnemo (npm launcher): ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = `${process.platform} ${process.arch}`;
  const pkg = packages[platform];
  if (!pkg) {
    fail(
      `no mnemo binary is published for ${platform}; ` +
        "download one from the releases page or build it with: go install github.com/mnemo-mcp/mnemo@latest",
    );
  }
  const exe = process.platform === "win32" ? "mnemo.exe" : "mnemo";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(
      `${pkg}, the package holding the binary for ${platform}, is not installed. ` +
        "npm installs it as an optional dependency: reinstall without --omit=optional / --no-optional " +
        "(or with --include=optional), or install the release binary instead",
    );
  }
}

// What the binary is told about how it was started (cli/invoked.go reads
// it): MNEMO_LAUNCHER is "npx" when npx (npm exec) ran this launcher and
// "npm" when it runs as an installed package's bin, so that messages name
// the command the user typed; the version and the absolute node and npx
// let "mnemo setup" write an entry that starts under a host's minimal
// PATH and does not change version under the user.
function launcherEnv() {
  const env = { ...process.env };
  env.MNEMO_LAUNCHER = process.env.npm_command === "exec" ? "npx" : "npm";
  env.MNEMO_LAUNCHER_VERSION = require("../package.json").version;
  const found = nodeAndNpx();
  env.MNEMO_LAUNCHER_NODE = found.node;
  env.MNEMO_LAUNCHER_NPX = found.npx;
  return env;
}

// nodeAndNpx is the node running this launcher and the npx beside it. A
// directory on PATH that leads to the same npx is preferred to the
// resolved one (Homebrew's /opt/homebrew/bin, not its versioned Cellar),
// so that the path stays valid across upgrades where it can.
function nodeAndNpx() {
  const exe = process.platform === "win32" ? ".cmd" : "";
  const sibling = join(dirname(process.execPath), `npx${exe}`);
  if (!existsSync(sibling)) {
    return { node: process.execPath, npx: "" };
  }
  const real = (p) => {
    try {
      return realpathSync(p);
    } catch {
      return "";
    }
  };
  const want = real(sibling);
  for (const dir of (process.env.PATH || "").split(delimiter)) {
    const npx = join(dir || ".", `npx${exe}`);
    const node = join(dir || ".", process.platform === "win32" ? "node.exe" : "node");
    if (isAbsolute(dir) && real(npx) === want && real(node) === real(process.execPath)) {
      return { node, npx };
    }
  }
  return { node: process.execPath, npx: sibling };
}

const child = spawn(binaryPath(), process.argv.slice(2), {
  stdio: "inherit",
  env: launcherEnv(),
  windowsHide: true,
});

// A terminal sends SIGINT and SIGHUP to its whole foreground process group,
// the binary included: passing them on as well would deliver them twice,
// and mnemo takes a second signal as "stop now". SIGTERM, and every signal
// when no terminal is attached (an MCP host signals this process alone),
// is passed on.
const inTerminal = isatty(0) || isatty(2);
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const handlers = {};
for (const sig of forwarded) {
  handlers[sig] = () => {
    if (sig !== "SIGTERM" && inTerminal) {
      return;
    }
    try {
      child.kill(sig);
    } catch {
      // The binary has exited already; its exit event ends this process.
    }
  };
  process.on(sig, handlers[sig]);
}

child.on("error", (err) => {
  fail(`cannot start ${err.path || "the mnemo binary"}: ${err.message}`);
});

child.on("exit", (code, signal) => {
  if (signal === null) {
    process.exit(code === null ? 1 : code);
  }
  // Die of the same signal, so that whoever started this process sees what
  // the binary's own parent would have seen.
  for (const sig of forwarded) {
    process.removeListener(sig, handlers[sig]);
  }
  process.kill(process.pid, signal);
  // A signal this process ignores or cannot take (SIGKILL to Windows, say)
  // ends it with the shell's convention for a signal death.
  process.exit(128 + (constants.signals[signal] || 0));
});
