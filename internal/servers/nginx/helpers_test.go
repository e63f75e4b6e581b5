package nginx

import "github.com/phptune/phptune/internal/model/knob"

// Functions only this package's tests use.

// Check reports the first path or address of s that nginx.conf cannot
// carry (see package confpath), so that a caller can refuse it before
// anything starts.
func (s Site) Check() error {
	_, err := render(knob.Defaults(), s, s.AccessLog != "")
	return err
}
