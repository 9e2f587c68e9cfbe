package cli

import (
	"runtime/debug"
	"strings"
)

// Build information. The Makefile sets these at link time:
//
//	go build -ldflags "-X github.com/pflow-go/pflow/internal/cli.Version=v1.2.0
//	  -X github.com/pflow-go/pflow/internal/cli.Commit=26dc037
//	  -X github.com/pflow-go/pflow/internal/cli.BuildDate=2026-11-23T22:23:00Z" ./cmd/pflow
//
// A plain `go build` or `go install` leaves Commit and BuildDate empty; they
// are then read from the VCS stamp Go embeds in the binary.
var (
	// Version is the pflow version.
	Version = "0.1.0-dev"
	// Commit is the git commit the binary was built from.
	Commit = ""
	// BuildDate is when the binary was built (RFC 3339, UTC).
	BuildDate = ""
)

// versionLine is what `pflow --version` prints: version, commit and build date.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(Version, Commit, BuildDate, bi)
}

// versionFrom fills what the link-time values leave empty from the build
// information Go embeds (module version, vcs.revision, vcs.time).
func versionFrom(version, commit, date string, bi *debug.BuildInfo) string {
	linkedCommit := commit != ""
	modified := false
	if bi != nil {
		if v := bi.Main.Version; version == "0.1.0-dev" && v != "" && v != "(devel)" {
			version = strings.TrimPrefix(v, "v")
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value
				}
			case "vcs.time":
				if date == "" {
					date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true" && !linkedCommit
			}
		}
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if commit == "" {
		commit = "unknown"
	} else if modified {
		commit += "-dirty"
	}
	if date == "" {
		date = "unknown"
	}
	return "pflow version " + version + " (commit " + commit + ", built " + date + ")"
}
