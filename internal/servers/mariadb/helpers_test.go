package mariadb

// Functions only this package's tests use.

// Check reports the first path of p that my.cnf cannot carry (see package
// confpath), so that a caller can refuse it before anything starts.
func (p Paths) Check() error {
	_, err := p.quoted()
	return err
}
