package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names the environment variable that overrides where the
// control-plane binaries are looked up.
const BinDirEnv = "CALDERA_BIN_DIR"

// FindBinDir returns $CALDERA_BIN_DIR, or the bin directory of the nearest
// enclosing source tree (a directory with go.mod and bin/kube-apiserver),
// searching upward from the working directory.
func FindBinDir() (string, error) {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "bin", "kube-apiserver")); err == nil {
				return filepath.Join(dir, "bin"), nil
			}
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no control-plane binaries found above %s: run hack/build-control-plane.sh or set %s", wd, BinDirEnv)
		}
	}
}
