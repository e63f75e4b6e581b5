package observe

import (
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/watch/proc"
)

// scan reads every process's stat and the machine.
func (o *Observer) scan() (map[int]procInfo, proc.Machine, error) {
	m, err := o.fs.ReadMachine()
	if err != nil {
		return nil, m, err
	}
	pids, err := o.fs.PIDs()
	if err != nil {
		return nil, m, err
	}
	cur := make(map[int]procInfo, len(pids))
	for _, pid := range pids {
		st, err := o.fs.ReadStat(pid)
		if err != nil {
			// Gone since the directory was listed: it is accounted
			// as a vanished process below.
			continue
		}
		cur[pid] = procInfo{stat: st}
	}
	o.assign(cur)
	return cur, m, nil
}

// assign labels each process with its group by walking the roots' trees.
// Roots are walked in order, the generator last, and a process already
// labelled is not relabelled: a test that starts php-fpm as its own child
// still sees php-fpm as php-fpm, not as part of the generator.
func (o *Observer) assign(cur map[int]procInfo) {
	children := make(map[int][]int, len(cur))
	for pid, p := range cur {
		children[p.stat.PPID] = append(children[p.stat.PPID], pid)
	}
	roots := slices.Clone(o.cfg.Roots)
	slices.SortStableFunc(roots, func(a, b Root) int {
		ga, gb := a.Component == ComponentGenerator, b.Component == ComponentGenerator
		switch {
		case ga == gb:
			return 0
		case gb:
			return -1
		default:
			return 1
		}
	})
	for _, r := range roots {
		rp, ok := cur[r.PID]
		if !ok || rp.group != "" {
			continue
		}
		rootGroup, childGroup := groupsOf(r.Component)
		rp.group = rootGroup
		cur[r.PID] = rp
		queue := slices.Clone(children[r.PID])
		for len(queue) > 0 && len(queue) < 1<<20 {
			pid := queue[0]
			queue = queue[1:]
			p := cur[pid]
			if p.group != "" {
				continue
			}
			p.group = childGroup
			switch childGroup {
			case GroupFPMWorkers:
				p.group = o.fpmGroup(p.stat)
			case GroupUnitWorkers:
				p.group = o.unitGroup(p.stat)
			}
			cur[pid] = p
			queue = append(queue, children[pid]...)
		}
	}
	if o.cfg.Others {
		for pid, p := range cur {
			if p.group == "" {
				p.group = GroupOther
				cur[pid] = p
			}
		}
	}
}

// groupsOf names the groups of a component's root process and of its
// descendants.
func groupsOf(component string) (root, child string) {
	switch component {
	case ComponentNginx:
		return GroupNginxMaster, GroupNginxWorkers
	case ComponentFPM:
		return GroupFPMMaster, GroupFPMWorkers
	case ComponentApache:
		return GroupApacheParent, GroupApacheWorkers
	case ComponentApacheModPHP:
		return GroupApacheParent, GroupApacheModPHPWorkers
	case ComponentUnit:
		return GroupUnitMain, GroupUnitWorkers
	case ComponentLighttpd:
		return GroupLighttpd, GroupLighttpdWorkers
	case ComponentCaddy:
		return GroupCaddy, GroupCaddy
	case ComponentH2O:
		return GroupH2O, GroupH2O
	case ComponentMariaDB:
		return GroupMariaDB, GroupMariaDB
	case ComponentRedis:
		return GroupRedis, GroupRedis
	case ComponentMemcached:
		return GroupMemcached, GroupMemcached
	case ComponentGenerator:
		return GroupGenerator, GroupGenerator
	}
	return component, component
}

// fpmGroup names a php-fpm worker's group from its pool ("php-fpm: pool
// www" in its argv). The cmdline is read once per process.
func (o *Observer) fpmGroup(st proc.Stat) string {
	k := pkey{st.PID, st.StartTime}
	pool, ok := o.pools[k]
	if !ok {
		c, _ := o.fs.ReadCmdline(st.PID)
		_, pool, _ = strings.Cut(c, "pool ")
		pool = strings.TrimSpace(pool)
		o.pools[k] = pool
		if pool != "" && !slices.Contains(o.poolNames, pool) {
			o.poolNames = append(o.poolNames, pool)
		}
	}
	if len(o.poolNames) > 1 && pool != "" {
		return GroupFPMWorkers + " " + pool
	}
	return GroupFPMWorkers
}

// unitGroup names one of Unit's processes from its title ("unit:
// router", "unit: "app" application"), read once per process.
func (o *Observer) unitGroup(st proc.Stat) string {
	k := pkey{st.PID, st.StartTime}
	g, ok := o.pools[k]
	if !ok {
		c, _ := o.fs.ReadCmdline(st.PID)
		switch {
		case strings.HasPrefix(c, "unit: router"):
			g = GroupUnitRouter
		case strings.HasPrefix(c, "unit: ") && strings.HasSuffix(strings.TrimSpace(c), " application"):
			g = GroupUnitWorkers
		default: // controller, prototype, discovery
			g = GroupUnitMain
		}
		o.pools[k] = g
	}
	return g
}

// IsFPMWorkers reports whether a group name is a php-fpm worker group.
func IsFPMWorkers(name string) bool { return strings.HasPrefix(name, GroupFPMWorkers) }

// IsPHPWorkers reports whether a group is one of PHP's worker pools: php-fpm's
// workers, or Apache's children with mod_php.
func IsPHPWorkers(name string) bool {
	return IsFPMWorkers(name) || name == GroupApacheModPHPWorkers || name == GroupUnitWorkers
}

// groupRank orders groups the way the stack is layered: web server, PHP,
// database, then anything else, the generator and the rest of the machine.
func groupRank(name string) int {
	switch {
	case name == GroupNginxMaster:
		return 0
	case name == GroupNginxWorkers:
		return 1
	case name == GroupApacheParent:
		return 0
	case name == GroupApacheWorkers:
		return 1
	case name == GroupApacheModPHPWorkers:
		return 3
	case name == GroupUnitMain:
		return 0
	case name == GroupUnitRouter:
		return 1
	case name == GroupUnitWorkers:
		return 3
	case name == GroupLighttpd, name == GroupCaddy, name == GroupH2O:
		return 0
	case name == GroupLighttpdWorkers:
		return 1
	case name == GroupFPMMaster:
		return 2
	case IsFPMWorkers(name):
		return 3
	case name == GroupMariaDB, name == GroupRedis, name == GroupMemcached:
		return 4
	case name == GroupGenerator:
		return 6
	case name == GroupOther:
		return 7
	}
	return 5
}
