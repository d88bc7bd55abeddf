#!/usr/bin/env python3
"""A minimal MCP client over stdio, for the release smoke test.

  mcp-stdio.py initialize [--tools] -- CMD...
      starts CMD, sends initialize (and with --tools, tools/list), checks
      every stdout line is a JSON-RPC message and the server is mnemo, closes
      stdin and expects exit status 0.
  mcp-stdio.py launcher LAUNCHER BINARY DATADIR
      checks that the npm launcher behaves as the binary does: the same exit
      status for a usage error; SIGTERM, SIGINT and SIGHUP passed on (the
      launcher ends as the binary alone would, no binary left behind); a
      binary killed by a signal makes the launcher die of it.

Everything is bounded by the timeouts below; nothing sleeps on the clock.
"""
import json
import os
import signal
import subprocess
import sys

TIMEOUT = 60


def start(cmd, env=None):
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def request(proc, id_, method, params):
    msg = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"{method}: the server closed stdout; stderr:\n{proc.stderr.read().decode()}")
    res = json.loads(line)
    if res.get("jsonrpc") != "2.0" or res.get("id") != id_ or "result" not in res:
        raise SystemExit(f"{method}: unexpected answer {line!r}")
    return res["result"]


def initialize(proc):
    res = request(proc, 1, "initialize", {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "release-smoke", "version": "1"},
    })
    if res["serverInfo"]["name"] != "mnemo":
        raise SystemExit(f"initialize: serverInfo {res['serverInfo']}")
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.flush()
    return res


def cmd_initialize(args):
    tools = False
    if args and args[0] == "--tools":
        tools, args = True, args[1:]
    if not args or args[0] != "--":
        raise SystemExit("usage: mcp-stdio.py initialize [--tools] -- CMD...")
    proc = start(args[1:])
    res = initialize(proc)
    print(f"initialize: {res['serverInfo']['name']} {res['serverInfo']['version']} (protocol {res['protocolVersion']})")
    if tools:
        names = sorted(t["name"] for t in request(proc, 2, "tools/list", {})["tools"])
        if "add_memory" not in names or "retrieve_memory" not in names:
            raise SystemExit(f"tools/list: {names}")
        print(f"tools/list: {len(names)} tools")
    proc.stdin.close()
    rest = proc.stdout.read()
    code = proc.wait(TIMEOUT)
    if rest.strip():
        for line in rest.splitlines():
            json.loads(line)  # stdout carries JSON-RPC only
    if code != 0:
        raise SystemExit(f"exit status {code}; stderr:\n{proc.stderr.read().decode()}")


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def cmd_launcher(launcher, binary, data):
    env = dict(os.environ, MNEMO_DATA_DIR=data, MNEMO_LOG_LEVEL="warn")

    # Exit status: a usage error is the same through the launcher.
    want = subprocess.run([binary, "no-such-command"], capture_output=True, env=env, timeout=TIMEOUT).returncode
    got = subprocess.run([launcher, "no-such-command"], capture_output=True, env=env, timeout=TIMEOUT).returncode
    if want == 0 or got != want:
        raise SystemExit(f"usage error: launcher exit {got}, binary exit {want}")
    print(f"exit status kept: {got}")

    # A signal to the launcher alone (as a host stops a server): the binary
    # gets it and the launcher ends as the binary alone would have ended.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        bare = start([binary, "serve"], env)
        initialize(bare)
        bare.send_signal(sig)
        want = bare.wait(TIMEOUT)
        proc = start([launcher, "serve"], env)
        initialize(proc)
        kids = children(proc.pid)
        if len(kids) != 1:
            raise SystemExit(f"launcher {proc.pid} has children {kids}, want the binary alone")
        proc.send_signal(sig)
        got = proc.wait(TIMEOUT)
        if got != want or alive(kids[0]):
            raise SystemExit(f"{sig.name}: launcher exit {got} (binary alone: {want}); binary still running: {alive(kids[0])}")
        print(f"{sig.name} forwarded: exit {got}, as the binary alone")
        close(bare, proc)

    # The binary dies of a signal: so does the launcher.
    proc = start([launcher, "serve"], env)
    initialize(proc)
    kid = children(proc.pid)[0]
    os.kill(kid, signal.SIGKILL)
    got = proc.wait(TIMEOUT)
    if got != -signal.SIGKILL:
        raise SystemExit(f"binary killed by SIGKILL: launcher exit {got}, want death by SIGKILL")
    print("signal death re-raised: SIGKILL")
    close(proc)


def close(*procs):
    for p in procs:
        p.stdin.close()
        p.stdout.close()
        p.stderr.close()


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "initialize":
        cmd_initialize(sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "launcher":
        cmd_launcher(*sys.argv[2:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
