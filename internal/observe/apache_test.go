package observe

import "testing"

func TestApacheGroups(t *testing.T) {
	cases := []struct {
		component   string
		root, child string
		childIsPHP  bool
	}{
		{ComponentNginx, GroupNginxMaster, GroupNginxWorkers, false},
		{ComponentApache, GroupApacheParent, GroupApacheWorkers, false},
		{ComponentApacheModPHP, GroupApacheParent, GroupApacheModPHPWorkers, true},
		{ComponentFPM, GroupFPMMaster, GroupFPMWorkers, true},
	}
	for _, c := range cases {
		root, child := groupsOf(c.component)
		if root != c.root || child != c.child {
			t.Errorf("groupsOf(%s) = %q, %q; want %q, %q", c.component, root, child, c.root, c.child)
		}
		if IsPHPWorkers(child) != c.childIsPHP {
			t.Errorf("IsPHPWorkers(%q) = %v, want %v", child, !c.childIsPHP, c.childIsPHP)
		}
	}
	// Layered as the stack is: web server, PHP, database.
	order := []string{GroupApacheParent, GroupApacheWorkers, GroupApacheModPHPWorkers, GroupMariaDB, GroupGenerator}
	for i := 1; i < len(order); i++ {
		if groupRank(order[i-1]) > groupRank(order[i]) {
			t.Errorf("group %q ranks after %q", order[i-1], order[i])
		}
	}
}
