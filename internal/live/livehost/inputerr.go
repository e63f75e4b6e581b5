package livehost

import "fmt"

// InputError is a mistake in what the user named (a flag's path, pool or
// socket) rather than a fault of the host: Msg names the problem and Fix
// how to put it right. The command line prints it as a usage error.
type InputError struct {
	Msg string
	Fix string
}

func (e *InputError) Error() string { return e.Msg }

// inputErr makes an InputError; format and args are Msg's.
func inputErr(fix, format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...), Fix: fix}
}
