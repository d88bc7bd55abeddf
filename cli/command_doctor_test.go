package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// doctorEndpoint is a fake OpenAI-compatible endpoint that answers every
// chat completion with "ok" and every embedding with a 3-vector, or, when
// status is set, answers every request with that status and an error that
// echoes the API key it was sent (doctor must not print it).
func doctorEndpoint(t *testing.T, status int) *openaitest.Server {
	srv := openaitest.NewServer(t)
	srv.Func = func(r openaitest.Request) openaitest.Reply {
		switch {
		case status != 0:
			return openaitest.Error(t, status, "invalid_request_error", "invalid_api_key", "",
				"Incorrect API key provided: "+strings.TrimPrefix(r.Auth, "Bearer "))
		case r.Path == openaitest.EmbeddingsPath:
			return openaitest.Embeddings(t, "emb", [][]float32{{0.1, 0.2, 0.3}})
		}
		return openaitest.Chat(t, "ok", openaitest.Usage{PromptTokens: 14, CompletionTokens: 1})
	}
	return srv
}

func TestDoctorCommand(t *testing.T) {
	const key = "sk-test-Zq8WcX1eKf"
	normalize := func(out, dir, url string) string {
		out = strings.ReplaceAll(out, dir, "$DATA")
		return strings.ReplaceAll(out, url, "$URL")
	}
	t.Run("healthy", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data") // created 0700 by the store
		seedRich(t, dir)
		srv := doctorEndpoint(t, 0)
		code, out, errOut := runEnv(t, env{
			"MNEMO_DATA_DIR": dir, "MNEMO_LLM_BASE_URL": srv.URL, "MNEMO_LLM_API_KEY": key,
			"MNEMO_EMBEDDING_MODEL": "emb-small",
		}, "doctor")
		if code != exitOK {
			t.Errorf("doctor = %d, want 0\n%s%s", code, out, errOut)
		}
		if strings.Contains(out+errOut, key) {
			t.Errorf("doctor printed the API key:\n%s", out)
		}
		checkGolden(t, "doctor_healthy", normalize(out, dir, strings.TrimSuffix(srv.URL, "/v1")))
		if entries, _ := os.ReadDir(filepath.Join(dir, "users")); len(entries) != 1 {
			t.Errorf("doctor left %d entries in users/, want only ana", len(entries))
		}
	})
	t.Run("symlink", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		seedRich(t, dir)
		outside := t.TempDir()
		// A link planted in a data directory that came with a repository.
		if err := os.Symlink(outside, filepath.Join(dir, "users", "ana", "agents", "planted")); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runEnv(t, env{"MNEMO_DATA_DIR": dir}, "doctor")
		if code != exitError || !strings.Contains(out, "FAIL  1 symbolic link(s) inside the data directory: users/ana/agents/planted") ||
			strings.Contains(out, "readable by other users") {
			t.Errorf("doctor = %d, want a FAIL naming the link (and no permission complaint about it)\n%s%s", code, out, errOut)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("doctor wrote %d entries through the link", len(entries))
		}
	})
	t.Run("broken", func(t *testing.T) {
		dir := t.TempDir()
		seedRich(t, dir)
		os.Chmod(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "users", "ana", "coder.txt"), nil, 0o644)
		srv := doctorEndpoint(t, http.StatusUnauthorized)
		code, out, errOut := runEnv(t, env{"MNEMO_DATA_DIR": dir, "MNEMO_LLM_BASE_URL": srv.URL, "MNEMO_LLM_API_KEY": key}, "doctor")
		if code != exitError {
			t.Errorf("doctor = %d, want 1", code)
		}
		if !strings.Contains(out, "MNEMO_LLM_API_KEY") || !strings.Contains(out, "chmod 700") || !strings.Contains(out, "3 problem(s)") {
			t.Errorf("doctor output does not say what to fix:\n%s", out)
		}
		if strings.Contains(out+errOut, key) {
			t.Errorf("doctor printed the API key:\n%s", out)
		}
		checkGolden(t, "doctor_broken", normalize(out, dir, strings.TrimSuffix(srv.URL, "/v1")))
	})
	t.Run("missing data dir", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "a", "b")
		code, out, _ := runEnv(t, dataEnv(dir), "doctor")
		if code != exitOK || !strings.Contains(out, "does not exist yet") {
			t.Errorf("doctor with a missing data dir = %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(parent, "a")); !os.IsNotExist(err) {
			t.Errorf("doctor left the directories it created to check (err %v)", err)
		}
		ro := filepath.Join(parent, "ro")
		os.Mkdir(ro, 0o500)
		if os.Geteuid() != 0 {
			code, out, _ = runEnv(t, dataEnv(filepath.Join(ro, "data")), "doctor")
			if code != exitError || !strings.Contains(out, "cannot be created") {
				t.Errorf("doctor with an uncreatable data dir = %d\n%s", code, out)
			}
		}
	})
	t.Run("bad config", func(t *testing.T) {
		code, out, _ := runEnv(t, env{"MNEMO_DATA_DIR": t.TempDir(), "MNEMO_MAX_FACTS": "0"}, "doctor")
		if code != exitError || !strings.Contains(out, "max_facts") || !strings.Contains(out, "MNEMO_MAX_FACTS") {
			t.Errorf("doctor with a bad setting = %d\n%s", code, out)
		}
	})
	t.Run("corrupt memory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		seedRich(t, dir)
		os.WriteFile(filepath.Join(dir, "users", "ana", "memory.json"), []byte("{not json"), 0o600)
		code, out, _ := runEnv(t, dataEnv(dir), "doctor")
		if code != exitError || !strings.Contains(out, "memory.json of ana") || !strings.Contains(out, "mnemo rollback --user ana") {
			t.Errorf("doctor with a corrupt memory.json = %d\n%s", code, out)
		}
	})
}

// TestDoctorDataDirGiven: doctor flags a data_dir that is relative or
// holds a variable the host did not expand, and says what to do.
func TestDoctorDataDirGiven(t *testing.T) {
	for _, tc := range []struct {
		dataDir string
		want    []string // empty: no problem with the path itself
	}{
		{"${workspaceFolder}/.mnemo", []string{"FAIL", "${workspaceFolder}", "nobody expanded", "fix: write the absolute path", "mnemo setup"}},
		{"$HOME/mnemo", []string{"FAIL", "$HOME", "nobody expanded"}},
		{`%APPDATA%\mnemo`, []string{"FAIL", "%APPDATA%", "nobody expanded"}},
		{"relative/data", []string{"FAIL", "is a relative path", "fix: set data_dir to an absolute path"}},
		{"ABS", nil},
	} {
		t.Run(tc.dataDir, func(t *testing.T) {
			// Relative paths resolve against the working directory: run
			// in a temporary one, so that nothing lands in the package.
			t.Chdir(t.TempDir())
			dataDir := tc.dataDir
			if dataDir == "ABS" {
				dataDir = filepath.Join(t.TempDir(), "data")
			}
			_, out, errOut := runEnv(t, env{"MNEMO_DATA_DIR": dataDir}, "doctor")
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("doctor with data_dir %q does not say %q:\n%s%s", dataDir, w, out, errOut)
				}
			}
			if tc.want == nil && (strings.Contains(out, "nobody expanded") || strings.Contains(out, "relative path")) {
				t.Errorf("doctor flagged the absolute data_dir %q:\n%s", dataDir, out)
			}
		})
	}
}

// TestDoctorShortPassword: however short the storage password, doctor
// masks it and leaves the words around it whole, so that no gap in a
// word ("datxxxxxase") tells it.
func TestDoctorShortPassword(t *testing.T) {
	glued := regexp.MustCompile(`[A-Za-z0-9]xxxxx|xxxxx[A-Za-z0-9]`)
	for _, tc := range []struct{ password, url string }{
		{"ab", "postgres://mnemo:ab@127.0.0.1:1/mnemo"},
		{"x", "postgres://mnemo:x@127.0.0.1:1/mnemo"},
		{"ab", "postgres://127.0.0.1:1/mnemo?user=mnemo&password=ab"},
		{"db", "postgres://mnemo:db@127.0.0.1:1/db"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, out, errOut := runEnv(t, env{"MNEMO_DATA_DIR": t.TempDir(), "MNEMO_STORAGE": tc.url}, "doctor")
			all := out + errOut
			if m := glued.FindString(all); m != "" {
				t.Errorf("doctor masked the password %q inside a word (%q):\n%s", tc.password, m, all)
			}
			if !strings.Contains(all, "cannot reach the database") {
				t.Errorf("doctor does not report the unreachable database:\n%s", all)
			}
			for _, leak := range []string{":" + tc.password + "@", "password=" + tc.password, " " + tc.password + " "} {
				if strings.Contains(all, leak) {
					t.Errorf("doctor shows the password (%q):\n%s", leak, all)
				}
			}
		})
	}
}
