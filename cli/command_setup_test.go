package cli

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// fakeExe is the binary path setup writes in the tests.
const fakeExe = "/opt/mnemo/bin/mnemo"

func useFakeExecutable(t *testing.T) {
	t.Helper()
	old := executable
	executable = func() (string, error) { return fakeExe, nil }
	t.Cleanup(func() { executable = old })
}

// setupEnv is an environment with a home directory and a data directory.
func setupEnv(home, data string) env {
	return env{"HOME": home, "USERPROFILE": home, "MNEMO_DATA_DIR": data}
}

// hostFile is where setup writes h's user-wide file under home.
func hostFile(t *testing.T, host, home string) string {
	t.Helper()
	p, err := lookupSetupHost(host).global(runtime.GOOS, setupEnv(home, "").get)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// installFixture copies testdata/setup/name to path.
func installFixture(t *testing.T, name, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "setup", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// backups lists the backups of path.
func backups(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".bak-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// topKeys is the keys of a JSON object in file order.
func topKeys(t *testing.T, data []byte) []string {
	t.Helper()
	ms, err := parseObject(data)
	if err != nil {
		t.Fatalf("parse %s: %v", data, err)
	}
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = m.key
	}
	return keys
}

func decodeJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

// TestSetupHosts merges mnemo into a fixture of each host's file: other
// servers and keys unchanged (and in their order), a backup of the
// original, an idempotent second run, and a dry run that writes nothing.
func TestSetupHosts(t *testing.T) {
	useFakeExecutable(t)
	for _, tc := range []struct {
		host, fixture, key string
		stdioType          bool
	}{
		{"claude-desktop", "claude_desktop_config.json", "mcpServers", false},
		{"claude-code", "claude.json", "mcpServers", true},
		{"cursor", "cursor_mcp.json", "mcpServers", false},
		{"vscode", "vscode_mcp.json", "servers", true},
		{"windsurf", "windsurf_mcp_config.json", "mcpServers", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
			e := setupEnv(home, data)
			file := hostFile(t, tc.host, home)
			orig := installFixture(t, tc.fixture, file)

			// Dry run: says what it would do, writes nothing.
			code, out, errOut := runEnv(t, e, "setup", tc.host, "--dry-run")
			if code != exitOK || !strings.Contains(out, `would add server "mnemo"`) || !strings.Contains(out, fakeExe) {
				t.Fatalf("setup --dry-run = %d\n%s%s", code, out, errOut)
			}
			if got, _ := os.ReadFile(file); !bytes.Equal(got, orig) || len(backups(t, file)) != 0 {
				t.Fatalf("setup --dry-run changed %s or left a backup", file)
			}

			code, out, errOut = runEnv(t, e, "setup", tc.host)
			if code != exitOK || !strings.Contains(out, `added server "mnemo"`) {
				t.Fatalf("setup = %d\n%s%s", code, out, errOut)
			}
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			before, after := decodeJSON(t, orig), decodeJSON(t, got)
			for k, v := range before {
				if k == tc.key {
					continue
				}
				if !reflect.DeepEqual(after[k], v) {
					t.Errorf("key %q changed: %v, was %v", k, after[k], v)
				}
			}
			if wantKeys := topKeys(t, orig); !reflect.DeepEqual(topKeys(t, got), wantKeys) {
				t.Errorf("top-level keys %v, want %v in the same order", topKeys(t, got), wantKeys)
			}
			servers := after[tc.key].(map[string]any)
			for name, v := range before[tc.key].(map[string]any) {
				if !reflect.DeepEqual(servers[name], v) {
					t.Errorf("server %q changed: %v, was %v", name, servers[name], v)
				}
			}
			want := map[string]any{"command": fakeExe, "args": []any{"serve", "--data-dir", data}}
			if tc.stdioType {
				want["type"] = "stdio"
			}
			if !reflect.DeepEqual(servers["mnemo"], want) {
				t.Errorf("mnemo entry = %v, want %v", servers["mnemo"], want)
			}
			bak := backups(t, file)
			if len(bak) != 1 {
				t.Fatalf("backups %v, want one", bak)
			}
			if b, _ := os.ReadFile(bak[0]); !bytes.Equal(b, orig) {
				t.Errorf("backup %s differs from the original file", bak[0])
			}

			// Second run: nothing to do, nothing written.
			code, out, errOut = runEnv(t, e, "setup", tc.host)
			if code != exitOK || !strings.Contains(out, "already set up") {
				t.Errorf("second setup = %d\n%s%s", code, out, errOut)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(again, got) || len(backups(t, file)) != 1 {
				t.Errorf("second setup rewrote %s or made another backup", file)
			}
		})
	}
}

// TestSetupNewFile: without a file, setup creates one with only mnemo,
// and no backup.
func TestSetupNewFile(t *testing.T) {
	useFakeExecutable(t)
	home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
	code, out, errOut := runEnv(t, setupEnv(home, data), "setup", "claude-desktop")
	if code != exitOK {
		t.Fatalf("setup = %d\n%s%s", code, out, errOut)
	}
	file := hostFile(t, "claude-desktop", home)
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"mcpServers": map[string]any{"mnemo": map[string]any{"command": fakeExe, "args": []any{"serve", "--data-dir", data}}}}
	if v := decodeJSON(t, got); !reflect.DeepEqual(v, want) {
		t.Errorf("new file = %v, want %v", v, want)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %o, want 0600", fi.Mode().Perm())
	}
	if b := backups(t, file); len(b) != 0 {
		t.Errorf("backups of a new file: %v", b)
	}
}

// TestSetupRefused: a file that is not plain JSON is refused with a clear
// message and left byte for byte as it was, without a backup.
func TestSetupRefused(t *testing.T) {
	useFakeExecutable(t)
	for _, tc := range []struct{ host, fixture, want string }{
		{"cursor", "broken.json", "is not valid JSON"},
		{"vscode", "vscode_mcp_jsonc.json", "comments or trailing commas"},
		{"windsurf", "servers_not_object.json", `"mcpServers" is not a JSON object`},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			home := t.TempDir()
			file := hostFile(t, tc.host, home)
			orig := installFixture(t, tc.fixture, file)
			for _, args := range [][]string{{"setup", tc.host}, {"setup", tc.host, "--dry-run"}} {
				code, out, errOut := runEnv(t, setupEnv(home, t.TempDir()), args...)
				if code != exitError || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "changed nothing") {
					t.Errorf("%v = %d\n%s%s\nwant a refusal saying %q", args, code, out, errOut, tc.want)
				}
			}
			if got, _ := os.ReadFile(file); !bytes.Equal(got, orig) {
				t.Errorf("refused setup changed %s", file)
			}
			entries, _ := os.ReadDir(filepath.Dir(file))
			if len(entries) != 1 {
				t.Errorf("refused setup left files beside %s: %v", file, entries)
			}
		})
	}
}

// TestSetupProject writes the project's own file: VS Code with its
// ${workspaceFolder}, the others with the project's absolute path.
func TestSetupProject(t *testing.T) {
	useFakeExecutable(t)
	home, project := t.TempDir(), t.TempDir()
	e := env{"HOME": home}
	for _, tc := range []struct{ host, file, dataDir string }{
		{"vscode", filepath.Join(project, ".vscode", "mcp.json"), "${workspaceFolder}/.mnemo"},
		{"cursor", filepath.Join(project, ".cursor", "mcp.json"), filepath.Join(project, ".mnemo")},
		{"claude-code", filepath.Join(project, ".mcp.json"), filepath.Join(project, ".mnemo")},
	} {
		code, out, errOut := runEnv(t, e, "setup", tc.host, "--project-dir", project)
		if code != exitOK || !strings.Contains(out, ".gitignore") {
			t.Fatalf("setup %s --project = %d\n%s%s", tc.host, code, out, errOut)
		}
		got, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), `"--data-dir",`) || !strings.Contains(string(got), tc.dataDir) {
			t.Errorf("%s = %s, want the data directory %s", tc.file, got, tc.dataDir)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("setup --project wrote into the home directory: %v", entries)
	}
	for _, host := range []string{"windsurf", "claude-desktop"} {
		if code, _, errOut := runEnv(t, e, "setup", host, "--project"); code != exitUsage || !strings.Contains(errOut, "no per-project") {
			t.Errorf("setup %s --project = %d %q, want a usage error", host, code, errOut)
		}
	}
}

// TestSetupOptions: --name, --print, --file, replacing a stale entry, and
// usage errors.
func TestSetupOptions(t *testing.T) {
	useFakeExecutable(t)
	home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
	e := setupEnv(home, data)

	code, out, _ := runEnv(t, e, "setup", "vscode", "--print")
	want := map[string]any{"servers": map[string]any{"mnemo": map[string]any{"type": "stdio", "command": fakeExe, "args": []any{"serve", "--data-dir", data}}}}
	if v := decodeJSON(t, []byte(out)); code != exitOK || !reflect.DeepEqual(v, want) {
		t.Errorf("setup --print = %d %v, want %v", code, v, want)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("setup --print wrote files: %v", entries)
	}

	file := filepath.Join(t.TempDir(), "custom.json")
	os.WriteFile(file, []byte(`{"mcpServers": {"memory": {"command": "mnemo", "args": ["serve"]}}}`), 0o600)
	code, out, errOut := runEnv(t, e, "setup", "cursor", "--file", file, "--name", "memory", "--dry-run")
	if code != exitOK || !strings.Contains(out, `would replace server "memory"`) || !strings.Contains(out, `-   "command": "mnemo"`) || !strings.Contains(out, `+   "command": "`+fakeExe) {
		t.Errorf("setup --dry-run of a stale entry = %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runEnv(t, e, "setup", "cursor", "--file", file, "--name", "memory")
	if code != exitOK || !strings.Contains(out, `replaced server "memory"`) || len(backups(t, file)) != 1 {
		t.Errorf("setup of a stale entry = %d\n%s%s", code, out, errOut)
	}

	for _, args := range [][]string{{"setup"}, {"setup", "emacs"}, {"setup", "cursor", "extra"}} {
		if code, _, errOut := runEnv(t, e, args...); code != exitUsage || errOut == "" {
			t.Errorf("%v = %d %q, want a usage error", args, code, errOut)
		}
	}
}

func TestHasComments(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a": "http://x"}`:      false,
		`{"a": "/* no */"}`:      false,
		`{"a": 1 // c` + "\n}":   true,
		`{/* c */ "a": 1}`:       true,
		`{"a": [1, 2,]}`:         true,
		`{"a": 1,` + "\n  }":     true,
		`{"a": "x\", // y"}`:     false,
		`{"a": "x\\", "b": "/"}`: false,
	} {
		if got := hasComments([]byte(in)); got != want {
			t.Errorf("hasComments(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzMergeSetup: whatever the host's file holds, mergeSetup either
// refuses it or returns a JSON object with the entry and every other
// server of the original.
func FuzzMergeSetup(f *testing.F) {
	for _, name := range []string{"claude.json", "cursor_mcp.json", "vscode_mcp.json", "vscode_mcp_jsonc.json", "broken.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "setup", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"mcpServers": null}`))
	entry := serverEntry{Command: fakeExe, Args: []string{"serve"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := mergeSetup(file, "mcpServers", "mnemo", entry)
		if err != nil || res.unchanged {
			return
		}
		var out map[string]map[string]json.RawMessage
		if err := json.Unmarshal(res.data, &out); err != nil {
			// Other keys may hold anything; the servers key must decode.
			var top map[string]json.RawMessage
			if err := json.Unmarshal(res.data, &top); err != nil {
				t.Fatalf("merged file is not JSON: %v\n%s", err, res.data)
			}
			if err := json.Unmarshal(top["mcpServers"], &map[string]json.RawMessage{}); err != nil {
				t.Fatalf("merged servers are not an object: %v\n%s", err, res.data)
			}
			return
		}
		if _, ok := out["mcpServers"]["mnemo"]; !ok {
			t.Fatalf("merged file has no mnemo entry:\n%s", res.data)
		}
	})
}

// TestSetupSymlink (issue 24, low 10): a host config that is a symbolic
// link into the user's dotfiles is changed where it points (the link
// stays a link), and one pointing outside the home directory is refused
// with both files left as they were.
func TestSetupSymlink(t *testing.T) {
	useFakeExecutable(t)
	home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
	file := hostFile(t, "claude-desktop", home)
	dotfile := filepath.Join(home, "dotfiles", "claude_desktop_config.json")
	before := installFixture(t, "claude_desktop_config.json", dotfile)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfile, file); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runEnv(t, setupEnv(home, data), "setup", "claude-desktop"); code != exitOK {
		t.Fatalf("setup through a link = %d\n%s%s", code, out, errOut)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	got, err := os.ReadFile(dotfile)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, before) || !bytes.Contains(got, []byte(fakeExe)) {
		t.Errorf("the link's target was not changed:\n%s", got)
	}

	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	was := installFixture(t, "claude_desktop_config.json", outside)
	os.Remove(file)
	if err := os.Symlink(outside, file); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runEnv(t, setupEnv(home, data), "setup", "claude-desktop")
	if code == exitOK || !strings.Contains(errOut, "outside the home directory") {
		t.Errorf("setup through a link out of home = %d, want a refusal saying why\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(outside); !bytes.Equal(got, was) {
		t.Errorf("the file outside home was changed")
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the refused link was replaced: %v, %v", fi, err)
	}
}

// TestSetupNpx writes the npm launcher's form: with --npx, and by itself
// when setup runs from the launcher (MNEMO_LAUNCHER=npx), where this
// binary's path is in npm's cache and must not be written.
func TestSetupNpx(t *testing.T) {
	useFakeExecutable(t)
	for _, tc := range []struct {
		name, host, key string
		launcher        bool
		args            []string
		stdioType       bool
	}{
		{"flag", "claude-desktop", "mcpServers", false, []string{"--npx"}, false},
		{"flag vscode", "vscode", "servers", false, []string{"--npx"}, true},
		{"from the installed launcher", "cursor", "mcpServers", true, nil, false},
		{"from the installed launcher with the flag", "claude-code", "mcpServers", true, []string{"--npx"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
			e := setupEnv(home, data)
			if tc.launcher {
				e["MNEMO_LAUNCHER"] = "npm"
			}
			code, out, errOut := runEnv(t, e, append([]string{"setup", tc.host}, tc.args...)...)
			if code != exitOK || !strings.Contains(out, "npx -y @mnemo-mcp/mnemo serve --data-dir "+data) {
				t.Fatalf("setup = %d\n%s%s", code, out, errOut)
			}
			if said := strings.Contains(errOut, "npm launcher"); said != (tc.launcher && tc.args == nil) {
				t.Errorf("stderr %q: the launcher note should appear only when the launcher chose the npx form", errOut)
			}
			got, err := os.ReadFile(hostFile(t, tc.host, home))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"command": "npx", "args": []any{"-y", "@mnemo-mcp/mnemo", "serve", "--data-dir", data}}
			if tc.stdioType {
				want["type"] = "stdio"
			}
			if entry := decodeJSON(t, got)[tc.key].(map[string]any)["mnemo"]; !reflect.DeepEqual(entry, want) {
				t.Errorf("mnemo entry = %v, want %v", entry, want)
			}
			if strings.Contains(string(got), fakeExe) {
				t.Errorf("the npx form names the binary's path:\n%s", got)
			}
			code, out, errOut = runEnv(t, e, append([]string{"setup", tc.host}, tc.args...)...)
			if code != exitOK || !strings.Contains(out, "already set up") || !strings.Contains(out, "runs npx") {
				t.Errorf("second setup = %d\n%s%s", code, out, errOut)
			}
		})
	}

	// --print shows the snippet a user copies by hand.
	code, out, _ := runEnv(t, env{"HOME": t.TempDir(), "MNEMO_DATA_DIR": "/srv/mnemo"}, "setup", "claude-desktop", "--npx", "--print")
	want := map[string]any{"mcpServers": map[string]any{"mnemo": map[string]any{"command": "npx", "args": []any{"-y", "@mnemo-mcp/mnemo", "serve", "--data-dir", "/srv/mnemo"}}}}
	if v := decodeJSON(t, []byte(out)); code != exitOK || !reflect.DeepEqual(v, want) {
		t.Errorf("setup --npx --print = %d %v, want %v", code, v, want)
	}
}

// TestSetupNpxPinned: from the launcher, the entry names the npx of the
// Node.js that runs it by its absolute path, with node's directory on its
// PATH, and pins the launcher's version; the output says why. Outside
// the launcher, --npx finds npx on the PATH.
func TestSetupNpxPinned(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("on Windows the entry runs plain npx (TestLaunchNpx)")
	}
	useFakeExecutable(t)
	bin := t.TempDir()
	npx := filepath.Join(bin, "npx")
	if err := os.WriteFile(npx, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     env
		args    []string
		command string
		pkg     string
		path    string
	}{
		{"npx", env{"MNEMO_LAUNCHER": "npx", "MNEMO_LAUNCHER_VERSION": "1.4.2", "MNEMO_LAUNCHER_NPX": "/opt/node/bin/npx", "MNEMO_LAUNCHER_NODE": "/opt/node/bin/node"},
			nil, "/opt/node/bin/npx", "@mnemo-mcp/mnemo@1.4.2", "/opt/node/bin:/usr/local/bin:/usr/bin:/bin"},
		{"nvm", env{"MNEMO_LAUNCHER": "npx", "MNEMO_LAUNCHER_VERSION": "2.0.0-rc.1", "MNEMO_LAUNCHER_NPX": "/home/u/.nvm/versions/node/v22.1.0/bin/npx", "MNEMO_LAUNCHER_NODE": "/home/u/.nvm/versions/node/v22.1.0/bin/node"},
			nil, "/home/u/.nvm/versions/node/v22.1.0/bin/npx", "@mnemo-mcp/mnemo@2.0.0-rc.1", "/home/u/.nvm/versions/node/v22.1.0/bin:/usr/local/bin:/usr/bin:/bin"},
		{"flag, npx on the PATH", env{"PATH": "relative:" + bin}, []string{"--npx"}, npx, "@mnemo-mcp/mnemo", bin + ":/usr/local/bin:/usr/bin:/bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
			e := setupEnv(home, data)
			maps.Copy(e, tc.env)
			code, out, errOut := runEnv(t, e, append([]string{"setup", "claude-desktop"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("setup = %d\n%s%s", code, out, errOut)
			}
			got, err := os.ReadFile(hostFile(t, "claude-desktop", home))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"command": tc.command, "args": []any{"-y", tc.pkg, "serve", "--data-dir", data},
				"env": map[string]any{"PATH": tc.path}}
			if entry := decodeJSON(t, got)["mcpServers"].(map[string]any)["mnemo"]; !reflect.DeepEqual(entry, want) {
				t.Errorf("mnemo entry = %v, want %v", entry, want)
			}
			for _, why := range []string{"by its absolute path", "minimal PATH"} {
				if !strings.Contains(errOut, why) {
					t.Errorf("stderr does not say why (%q):\n%s", why, errOut)
				}
			}
			if pinned := strings.Contains(errOut, "pinned to "+tc.pkg); pinned != strings.Contains(tc.pkg, "@mnemo-mcp/mnemo@") {
				t.Errorf("stderr on the pin:\n%s", errOut)
			}
		})
	}
}

// TestLaunchNpx is the npx entry's decision, platform by platform.
func TestLaunchNpx(t *testing.T) {
	launcher := env{"MNEMO_LAUNCHER": "npx", "MNEMO_LAUNCHER_VERSION": "1.4.2", "MNEMO_LAUNCHER_NPX": "/opt/node/bin/npx", "MNEMO_LAUNCHER_NODE": "/opt/node/bin/node"}
	onPath := func(p string) bool { return p == "/usr/bin/npx" }
	for _, tt := range []struct {
		name, goos string
		env        env
		want       npxLaunch
	}{
		{"launcher", "darwin", launcher, npxLaunch{command: "/opt/node/bin/npx", pkg: "@mnemo-mcp/mnemo@1.4.2", path: "/opt/node/bin:/usr/local/bin:/usr/bin:/bin"}},
		{"launcher on windows", "windows", launcher, npxLaunch{command: "npx", pkg: "@mnemo-mcp/mnemo@1.4.2"}},
		{"unassembled launcher", "linux", env{"MNEMO_LAUNCHER": "npm", "MNEMO_LAUNCHER_VERSION": "0.0.0"}, npxLaunch{command: "npx", pkg: "@mnemo-mcp/mnemo"}},
		{"odd version", "linux", env{"MNEMO_LAUNCHER_VERSION": "1.2; rm -rf"}, npxLaunch{command: "npx", pkg: "@mnemo-mcp/mnemo"}},
		{"no launcher, npx on the PATH", "linux", env{"PATH": "/nope:/usr/bin"}, npxLaunch{command: "/usr/bin/npx", pkg: "@mnemo-mcp/mnemo", path: "/usr/bin:/usr/local/bin:/bin"}},
		{"no launcher, no npx", "linux", env{"PATH": "/nope"}, npxLaunch{command: "npx", pkg: "@mnemo-mcp/mnemo"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := launchNpx(tt.goos, tt.env.get, onPath)
			if got.command != tt.want.command || got.pkg != tt.want.pkg || got.path != tt.want.path {
				t.Errorf("launchNpx() = %+v, want %+v", got, tt.want)
			}
			if len(got.notes) == 0 {
				t.Errorf("launchNpx() says nothing about its choice")
			}
		})
	}
}

// TestSetupJSONC: a JSONC file is refused, and the message shows the
// entry to add by hand and a --print command that works (it names the
// host) and prints the same entry.
func TestSetupJSONC(t *testing.T) {
	useFakeExecutable(t)
	home, data := t.TempDir(), filepath.Join(t.TempDir(), "data")
	installFixture(t, "vscode_mcp_jsonc.json", hostFile(t, "vscode", home))
	for _, tc := range []struct {
		name string
		env  env
		prog string
	}{
		{"binary", nil, "mnemo"},
		{"npx", env{"MNEMO_LAUNCHER": "npx"}, "npx -y @mnemo-mcp/mnemo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setupEnv(home, data)
			maps.Copy(e, tc.env)
			code, _, errOut := runEnv(t, e, "setup", "vscode", "--name", "memory")
			if code != exitError || !strings.Contains(errOut, "comments or trailing commas") {
				t.Fatalf("setup = %d\n%s", code, errOut)
			}
			_, rest, ok := strings.Cut(errOut, "(it is what '"+tc.prog+" setup vscode --name memory --data-dir "+data+" --print' prints):\n")
			if !ok {
				t.Fatalf("the refusal names no working --print command:\n%s", errOut)
			}
			code, printed, errPrint := runEnv(t, e, "setup", "vscode", "--name", "memory", "--data-dir", data, "--print")
			if code != exitOK || strings.TrimSpace(printed) != strings.TrimSpace(rest) {
				t.Errorf("--print = %d %q%s, want the entry of the refusal %q", code, printed, errPrint, rest)
			}
		})
	}
}
