// Package version says which build of Caldera is running, from what the Go
// toolchain records in every binary.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is a build's identity.
type Info struct {
	// Version is the main module's version: a tag, a pseudo-version made
	// from the revision, or "(devel)".
	Version string `json:"version"`
	// Revision, Time and Modified are the VCS commit the binary was built
	// from, its commit time and whether the checkout had changes. go build
	// records them in a git checkout unless -buildvcs=false; go run and go
	// test never do.
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	Time      string `json:"time,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get reads the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// fromBuildInfo is Get's reading of bi (nil when the binary has none).
func fromBuildInfo(bi *debug.BuildInfo, goVersion, platform string) Info {
	info := Info{Version: "(devel)", GoVersion: goVersion, Platform: platform}
	if bi == nil {
		return info
	}
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one-line form: "v1.2.0 (revision 0123456789ab, committed
// 2026-12-03T01:39:07Z, modified), go1.26.8, linux/amd64". Without a
// recorded revision it says why there may be none.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	if i.Revision == "" {
		b.WriteString(" (no VCS revision recorded: built by go run or go test, outside a git checkout, or with -buildvcs=false)")
	} else {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		b.WriteString(" (revision " + rev)
		if i.Time != "" {
			b.WriteString(", committed " + i.Time)
		}
		if i.Modified {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	b.WriteString(", " + i.GoVersion + ", " + i.Platform)
	return b.String()
}
