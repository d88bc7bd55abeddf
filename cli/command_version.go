package cli

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// runVersion is "mnemo version".
func runVersion(_ context.Context, c *call) int {
	fmt.Fprintln(c.stdout, "mnemo", version())
	return exitOK
}

// releaseVersion and releaseCommit are stamped by the release build
// (.goreleaser.yaml) with the linker's -X flag: the version of the tag
// being released and the commit it was built from. Empty in any other
// build, where the version comes from the build info.
var releaseVersion, releaseCommit string

// version is the version of the running binary: the release stamp when
// there is one, else from its build info.
func version() string {
	if releaseVersion != "" {
		return stampedVersion(releaseVersion, releaseCommit)
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(info)
}

// versionOf is the version build info stamps: the module version of
// "go install ...@v1.2.3", or the pseudo-version the go command derives
// from the VCS when it builds in a checkout (Go 1.24 and later, e.g.
// v0.0.0-20260501120000-abcdef123456+dirty). A build without either
// (-buildvcs=false, go run) is "dev", with the revision when it is known.
func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	v := "dev (" + rev[:min(len(rev), 12)]
	if dirty {
		v += ", modified"
	}
	return v + ")"
}

// stampedVersion is the version a release build prints: the stamped
// version with a leading v, as "go install ...@v1.2.3" prints it, and the
// commit's first 12 characters when known.
func stampedVersion(v, commit string) string {
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if commit == "" {
		return v
	}
	return v + " (" + commit[:min(len(commit), 12)] + ")"
}
