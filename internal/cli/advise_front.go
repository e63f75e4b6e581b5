package cli

import (
	"github.com/spf13/cobra"
)

// frontFlags say where advise looks for the web servers in front of
// php-fpm; root is the host flags' --root.
type frontFlags struct {
	nginx nginxFlags
	root  string
}

func (f *frontFlags) add(cmd *cobra.Command) { f.nginx.add(cmd) }
