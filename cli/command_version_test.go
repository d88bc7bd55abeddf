package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"go install at a tag", "v1.2.3", nil, "v1.2.3"},
		{"checkout build (pseudo-version)", "v0.0.0-20261124064127-eb355f11cddc", vcs("eb355f11cddcc62fbe3e6149a36e4724b0505162", "false"), "v0.0.0-20261124064127-eb355f11cddc"},
		{"checkout build with changes", "v0.0.0-20261124064127-eb355f11cddc+dirty", vcs("eb355f11cddcc62fbe3e6149a36e4724b0505162", "true"), "v0.0.0-20261124064127-eb355f11cddc+dirty"},
		{"nothing stamped", "(devel)", nil, "dev"},
		{"empty", "", nil, "dev"},
		{"devel with a revision", "(devel)", vcs("eb355f11cddcc62fbe3e6149a36e4724b0505162", "false"), "dev (eb355f11cddc)"},
		{"devel with a modified short revision", "(devel)", vcs("abc", "true"), "dev (abc, modified)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mnemo-mcp/mnemo", Version: tc.version}, Settings: tc.settings}
			if got := versionOf(info); got != tc.want {
				t.Errorf("versionOf(%q) = %q, want %q", tc.version, got, tc.want)
			}
		})
	}
}

func TestStampedVersion(t *testing.T) {
	for _, tc := range []struct{ version, commit, want string }{
		{"1.2.3", "eb355f11cddcc62fbe3e6149a36e4724b0505162", "v1.2.3 (eb355f11cddc)"},
		{"v1.2.3", "", "v1.2.3"},
		{"0.1.1-snapshot", "abc", "v0.1.1-snapshot (abc)"},
	} {
		if got := stampedVersion(tc.version, tc.commit); got != tc.want {
			t.Errorf("stampedVersion(%q, %q) = %q, want %q", tc.version, tc.commit, got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, errOut := runEnv(t, env{}, "version")
	if code != exitOK || !strings.HasPrefix(out, "mnemo ") || errOut != "" {
		t.Errorf("mnemo version = %d %q %q", code, out, errOut)
	}
}
