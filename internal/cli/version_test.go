package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-23T22:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"link-time values win", "1.2.0", "abc1234", "2026-01-02T03:04:05Z", stamped,
			"pflow version 1.2.0 (commit abc1234, built 2026-01-02T03:04:05Z)"},
		{"go build: the VCS stamp", "0.1.0-dev", "", "", stamped,
			"pflow version 0.1.0-dev (commit 0123456789ab-dirty, built 2026-11-23T22:00:00Z)"},
		{"go install module@version", "0.1.0-dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}},
			"pflow version 1.4.0 (commit unknown, built unknown)"},
		{"no build info", "0.1.0-dev", "", "", nil,
			"pflow version 0.1.0-dev (commit unknown, built unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionFrom(tc.version, tc.commit, tc.date, tc.bi); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
