// Package version says which build of Caldera is running, from what the Go
// toolchain records in every binary.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Info is a build's identity.
type Info struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	Time      string `json:"time,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get reads the running binary's build information.
func Get() Info {
	info := Info{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
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

// String is the one-line form.
func (i Info) String() string {
	s := i.Version
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " (" + rev
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return fmt.Sprintf("%s, %s, %s", s, i.GoVersion, i.Platform)
}
