package site

import "github.com/phptune/phptune/internal/model/knob"

// Functions only this package's tests use.

// StartConfig is the live site's configuration in phptune's knobs, and
// notes naming every live setting that is carried as-is, left out or
// refused by the knob model. See LiveStart for the pool lines it carries.
func StartConfig(s *Site) (knob.Config, []string) {
	st := LiveStart(s)
	return st.Config, st.Notes
}
