//go:build integration

package apis

import (
	"os"
	"testing"

	"github.com/caldera-sh/caldera/test/integration/framework"
)

var fw *framework.Framework

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, framework.Options{}, &fw))
}
