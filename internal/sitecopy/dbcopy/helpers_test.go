package dbcopy

import (
	"fmt"
	"os/user"
	"strconv"
)

// Functions only this package's tests use.

// LookupAccount returns the account called name.
func LookupAccount(name string) (Account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return Account{}, fmt.Errorf("account %q: %v; give the lab's account (phptune's own is %q)", name, err, "phptune")
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return Account{Name: u.Username, UID: uint32(uid), GID: uint32(gid)}, nil
}
