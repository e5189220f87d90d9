package localenv

import (
	"testing"

	"github.com/caldera-sh/caldera/pkg/agent/config"
)

// TestColocationConfig: the agents' configuration is one the agent takes.
func TestColocationConfig(t *testing.T) {
	c, err := config.Parse([]byte(colocationJSON))
	if err != nil {
		t.Fatal(err)
	}
	if c.GlobalConfig.OverSubscription == nil || c.GlobalConfig.OverSubscription.Enable == nil || !*c.GlobalConfig.OverSubscription.Enable {
		t.Errorf("oversubscription not on: %+v", c.GlobalConfig.OverSubscription)
	}
}
