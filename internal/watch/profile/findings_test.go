package profile

import (
	"slices"
	"testing"
)

func TestFindings(t *testing.T) {
	native := func(comps map[string]int) *Native {
		total := 0
		for _, v := range comps {
			total += v
		}
		return &Native{Samples: total, ByRole: map[string]int{RolePHP: total}, PHPComponents: comps}
	}
	for _, c := range []struct {
		name   string
		n      *Native
		p      *PHP
		cache  CacheState
		ids    []string
		challs []string
	}{
		{"nothing above a threshold", native(map[string]int{CompExecutor: 90, CompAllocator: 5, CompKMem: 4}), nil, CacheState{}, nil, nil},
		{"allocator and page faults", native(map[string]int{CompExecutor: 85, CompAllocator: 10, CompKMem: 5}), nil, CacheState{},
			[]string{"huge-pages"}, []string{"fpm.zend_alloc_huge_pages=on", "opcache.huge_code_pages=on"}},
		{"file lookups with timestamps on", native(map[string]int{CompExecutor: 90, CompKFiles: 10}), nil, CacheState{ValidateTS: true},
			[]string{"file-lookups"}, []string{"opcache.validate_timestamps=off", "realpath_cache_size=16M;realpath_cache_ttl=3600"}},
		{"file lookups with timestamps off", native(map[string]int{CompExecutor: 90, CompKFiles: 10}), nil, CacheState{},
			[]string{"file-lookups"}, []string{"realpath_cache_size=16M;realpath_cache_ttl=3600"}},
		{"compiling with opcache full", native(map[string]int{CompExecutor: 90, CompCompiler: 10}), nil, CacheState{OpcacheEnabled: true, OpcacheFull: true},
			[]string{"compiling"}, []string{"opcache.memory_consumption=256"}},
		{"compiling with the key table full", native(map[string]int{CompExecutor: 90, CompCompiler: 10}), nil, CacheState{OpcacheEnabled: true, OpcacheFreeShare: 0.5, KeysFull: true},
			[]string{"compiling"}, []string{"opcache.max_accelerated_files=100000"}},
		{"compiling without opcache: no finding", native(map[string]int{CompExecutor: 90, CompCompiler: 10}), nil, CacheState{},
			nil, nil},
		{"socket on nginx over tcp", native(map[string]int{CompExecutor: 80, CompKNet: 20}), nil, CacheState{Server: "nginx-fpm", Listen: "tcp"},
			[]string{"fpm-socket"}, []string{"listen=unix", "fastcgi_keepalive=most"}},
		{"socket on apache over unix", native(map[string]int{CompExecutor: 80, CompKNet: 20}), nil, CacheState{Server: "apache-event-fpm", Listen: "unix"},
			[]string{"fpm-socket"}, nil},
		{"database", native(map[string]int{CompExecutor: 80, CompMySQL: 20}), nil, CacheState{},
			[]string{"database"}, []string{"mariadb.innodb_buffer_pool_size=512M"}},
		{"one hot PHP function", nil, &PHP{Samples: 10, Self: map[string]int{"slow_loop": 6, "main": 4}}, CacheState{},
			[]string{"app-hot-function"}, nil},
		{"largest share first", native(map[string]int{CompExecutor: 50, CompKNet: 30, CompKFiles: 20}), nil, CacheState{},
			[]string{"fpm-socket", "file-lookups"}, []string{"realpath_cache_size=16M;realpath_cache_ttl=3600"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := Findings(c.n, c.p, c.cache)
			var ids, challs []string
			for _, f := range fs {
				ids = append(ids, f.ID)
				challs = append(challs, f.Challenges...)
				if f.Evidence == "" || f.Share <= 0 {
					t.Errorf("finding without evidence or share: %+v", f)
				}
			}
			if !slices.Equal(ids, c.ids) || !slices.Equal(challs, c.challs) {
				t.Errorf("findings %v with challenges %v, want %v and %v", ids, challs, c.ids, c.challs)
			}
		})
	}
}
