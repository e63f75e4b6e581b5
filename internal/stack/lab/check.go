package lab

import (
	"github.com/phptune/phptune/internal/model/knob"
)

// CheckServer says whether a lab could run server here, without starting
// anything: the web server's binary and modules and the PHP it runs are
// found as lab up would find them, and a missing one is the error lab up
// would give, naming what to install (apt-get's line, or how to build
// Unit). phptune servers checks every server with it before any of them
// starts.
func CheckServer(server string) error {
	cfg := knob.Defaults()
	if err := cfg.Set(knob.ServerKnob, server); err != nil {
		return err
	}
	if _, _, err := phpFor(cfg); err != nil {
		return err
	}
	_, _, err := webFor(cfg)
	return err
}
