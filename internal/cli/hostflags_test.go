package cli

import (
	"testing"

	"github.com/spf13/cobra"
)

// TestHostFlagsSameEverywhere: advise, apply and rollback name the host,
// its master and its pool with the same flags.
func TestHostFlagsSameEverywhere(t *testing.T) {
	env := &Env{}
	for _, cmd := range []*cobra.Command{newAdviseCmd(env), newApplyCmd(env), newRollbackCmd(env)} {
		for _, want := range []string{"root", "fpm-config", "fpm-prefix", "ini-dir", "pool", "mariadb-socket"} {
			if cmd.Flags().Lookup(want) == nil {
				t.Errorf("%s has no --%s", cmd.Name(), want)
			}
		}
	}
}
