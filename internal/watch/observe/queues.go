package observe

import (
	"fmt"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/watch/sockq"
)

// queues reads the kernel's accept queue of each of the stack's listening
// sockets (summed over SO_REUSEPORT copies).
func (o *Observer) queues(errs *[]string) []results.ListenQueue {
	if len(o.addrs) == 0 {
		return nil
	}
	wantUnix, wantTCP := false, false
	for _, a := range o.addrs {
		wantUnix = wantUnix || a.Network == "unix"
		wantTCP = wantTCP || a.Network == "tcp"
	}
	ls, err := o.sq.Listeners(wantUnix, wantTCP)
	if err != nil {
		*errs = append(*errs, err.Error())
	}
	var out []results.ListenQueue
	for i, a := range o.addrs {
		all := sockq.FindAll(ls, a)
		if len(all) == 0 {
			if err == nil {
				*errs = append(*errs, fmt.Sprintf("no listening socket %s (%s) found in the kernel's tables", a.Address, o.cfg.Sockets[i].Owner))
			}
			continue
		}
		// With SO_REUSEPORT (nginx.reuseport) each worker has a socket
		// of its own: the connections waiting are their sum, and each
		// socket's backlog is the limit one queue reaches.
		q := results.ListenQueue{Socket: a.Address, Owner: o.cfg.Sockets[i].Owner, Backlog: all[0].Backlog, AskedBacklog: o.cfg.Sockets[i].Backlog}
		for _, l := range all {
			q.Queued += l.Queued
			q.Backlog = min(q.Backlog, l.Backlog)
		}
		if len(all) > 1 {
			q.Sockets = len(all)
		}
		out = append(out, q)
	}
	return out
}
