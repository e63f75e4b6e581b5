package lab

import "syscall"

// ToolAccount is an unprivileged account a command runs one of its tools
// as (php -l of a site's files, say): never root.
type ToolAccount struct {
	Name     string
	UID, GID uint32
	// drop is set when phptune runs as root and the tool must switch to
	// the account.
	drop bool
}

// NewToolAccount is the account called name ("" or StackUser: phptune's
// own, created on first use), for a tool that runs from phptune's home
// (a PHP root's binaries): run by root, another account than phptune's
// must pass the rules of --user (an existing account, not root, not one
// of phptune's service accounts), and home gets o+x so that it can pass
// through, as a site lab's account does. Run by anyone else, the tool
// runs as that user and name must be "" or that user.
func NewToolAccount(name string) (*ToolAccount, error) {
	a, err := labAccount(name)
	if err != nil {
		return nil, err
	}
	if a.root && a.Name != StackUser {
		if err := allowTraverse(Home()); err != nil {
			return nil, err
		}
	}
	return &ToolAccount{Name: a.Name, UID: a.UID, GID: a.GID, drop: a.root}, nil
}

// SysProcAttr starts a process as the account, in a process group of
// its own (so that a timeout kills it and what it started as one).
func (t *ToolAccount) SysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if t.drop {
		attr.Credential = &syscall.Credential{Uid: t.UID, Gid: t.GID, Groups: []uint32{}}
	}
	return attr
}
