package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfo(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name                   string
		stampedCommit, stamped string // the commit and date ldflags
		bi                     *debug.BuildInfo
		wantCommit, wantDate   string
	}{
		{name: "nothing recorded", bi: nil, wantCommit: "unknown", wantDate: "unknown"},
		{name: "go build in a checkout",
			bi:         &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "false")},
			wantCommit: "0123456789abcdef0123456789abcdef01234567", wantDate: "2026-01-02T03:04:05Z"},
		{name: "go build with local changes",
			bi:         &debug.BuildInfo{Settings: vcs("vcs.revision", "abc", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")},
			wantCommit: "abc (modified)", wantDate: "2026-01-02T03:04:05Z"},
		{name: "go install of a pseudo-version",
			bi:         &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20260102030405-0123456789ab"}},
			wantCommit: "0123456789ab", wantDate: "2026-01-02T03:04:05Z"},
		{name: "go install of a pseudo-version without a tag before it",
			bi:         &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-0123456789ab"}},
			wantCommit: "0123456789ab", wantDate: "2026-01-02T03:04:05Z"},
		{name: "go install of a release", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			wantCommit: "unknown", wantDate: "unknown"},
		{name: "stamped by the release build wins", stampedCommit: "feedface", stamped: "2026-03-04T05:06:07Z",
			bi:         &debug.BuildInfo{Settings: vcs("vcs.revision", "abc", "vcs.time", "2026-01-02T03:04:05Z", "vcs.modified", "true")},
			wantCommit: "feedface", wantDate: "2026-03-04T05:06:07Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldCommit, oldDate := commit, date
			commit, date = tc.stampedCommit, tc.stamped
			defer func() { commit, date = oldCommit, oldDate }()
			got := buildInfo(tc.bi)
			if got.Commit != tc.wantCommit || got.Date != tc.wantDate {
				t.Errorf("commit, date = %q, %q; want %q, %q", got.Commit, got.Date, tc.wantCommit, tc.wantDate)
			}
			if s := got.String(); !strings.HasPrefix(s, "phasegate "+Version()+"\n") || !strings.Contains(s, "\ncommit: "+tc.wantCommit+"\n") || !strings.Contains(s, "\ndate:   "+tc.wantDate+"\n") {
				t.Errorf("printed:\n%s", s)
			}
		})
	}
}
