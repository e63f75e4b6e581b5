package livehost

import (
	"context"
	"fmt"

	"github.com/phptune/phptune/internal/live/liveapply"
)

// Recovery finds the servers a transaction's journal names, for undoing
// it (a rollback, or an apply cut short undone by the next): each is
// found only when named, so a rollback of php-fpm alone never needs
// MariaDB or nginx, nor nginx's configuration to be readable.
type Recovery struct {
	FPM     func() liveapply.Step
	MariaDB func() (*MariaDBStep, error)
	Nginx   func() (*Nginx, error)
	// Warn receives what cannot be set back (MariaDB not found: its file
	// is still restored).
	Warn func(string)
}

// Steps gives the steps for names, php-fpm's and MariaDB's first, then
// nginx's. An nginx that is named but not found gets a step whose
// reload says to reload it by hand.
func (r Recovery) Steps(names []string) []liveapply.Step {
	var out []liveapply.Step
	for _, n := range names {
		switch n {
		case "php-fpm":
			if r.FPM != nil {
				out = append(out, r.FPM())
			}
		case "mariadb":
			st, err := r.MariaDB()
			if err != nil {
				r.Warn(fmt.Sprintf("MariaDB cannot be set back (%v): its file is restored; set its previous values by hand or restart it", err))
				continue
			}
			out = append(out, st.Step())
		}
	}
	return append(out, r.nginxSteps(names)...)
}

// nginxSteps is nginx's step when names include it.
func (r Recovery) nginxSteps(names []string) []liveapply.Step {
	for _, n := range names {
		if n != "nginx" {
			continue
		}
		ng, err := r.Nginx()
		if err == nil && ng != nil {
			return []liveapply.Step{ng.Step()}
		}
		why := "no running nginx master was found"
		if err != nil {
			why = err.Error()
		}
		return []liveapply.Step{{Name: "nginx", Reload: func(context.Context) error {
			return fmt.Errorf("the transaction changed nginx, and %s: check it with nginx -t and reload it by hand (or name it with --nginx-config)", why)
		}}}
	}
	return nil
}
