package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestString(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/caldera-sh/caldera", Version: "v0.0.0-20261203013907-fa25d9a9983b"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "fa25d9a9983bd9adceecf5984002bd8bbe44ea8d"},
			{Key: "vcs.time", Value: "2026-12-03T01:39:07Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	dirty := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/caldera-sh/caldera", Version: "v1.2.0+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "fa25d9a9983bd9adceecf5984002bd8bbe44ea8d"},
			{Key: "vcs.time", Value: "2026-12-03T01:39:07Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	cases := map[string]struct {
		bi         *debug.BuildInfo
		want       Info
		wantString string
	}{
		"built in a git checkout": {
			bi: stamped,
			want: Info{Version: "v0.0.0-20261203013907-fa25d9a9983b", Revision: "fa25d9a9983bd9adceecf5984002bd8bbe44ea8d",
				Time: "2026-12-03T01:39:07Z", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			wantString: "v0.0.0-20261203013907-fa25d9a9983b (revision fa25d9a9983b, committed 2026-12-03T01:39:07Z), go1.26.8, linux/amd64",
		},
		"built from a changed checkout": {
			bi: dirty,
			want: Info{Version: "v1.2.0+dirty", Revision: "fa25d9a9983bd9adceecf5984002bd8bbe44ea8d", Modified: true,
				Time: "2026-12-03T01:39:07Z", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			wantString: "v1.2.0+dirty (revision fa25d9a9983b, committed 2026-12-03T01:39:07Z, modified), go1.26.8, linux/amd64",
		},
		"built without VCS stamping": {
			bi:   &debug.BuildInfo{Main: debug.Module{Path: "github.com/caldera-sh/caldera", Version: "(devel)"}},
			want: Info{Version: "(devel)", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			wantString: "(devel) (no VCS revision recorded: built by go run or go test, outside a git checkout, or with -buildvcs=false), " +
				"go1.26.8, linux/amd64",
		},
		"no build information": {
			want: Info{Version: "(devel)", GoVersion: "go1.26.8", Platform: "linux/amd64"},
			wantString: "(devel) (no VCS revision recorded: built by go run or go test, outside a git checkout, or with -buildvcs=false), " +
				"go1.26.8, linux/amd64",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fromBuildInfo(tc.bi, "go1.26.8", "linux/amd64")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fromBuildInfo (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantString, got.String()); diff != "" {
				t.Errorf("String (-want,+got):\n%s", diff)
			}
		})
	}
}
