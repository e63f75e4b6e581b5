package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/live/advise"
	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/testkit/goldentest"
)

// adviceFixture is a host of two pools, one too large for its memory,
// with opcache full and a stored tune beside it; a pool name and a
// finding carry markup, which the page must escape.
func adviceFixture() advise.Advice {
	h := advise.Host{MemTotal: 4 << 30, MemAvailable: 2 << 30}
	a := advise.Advise(h, []advise.Pool{
		{Master: "/etc/php/8.2/fpm/php-fpm.conf", Name: "www", File: "/etc/php/8.2/fpm/pool.d/www.conf", PM: "dynamic", MaxChildren: 5,
			WorkerPSS: []int64{30 << 20, 32 << 20}, StatusPath: "/status", Uptime: 72 * 3600e9,
			Status: &results.FPMStatus{MaxActiveProcesses: 5, MaxChildrenReached: 12}},
		{Master: "/etc/php/8.2/fpm/php-fpm.conf", Name: "<shop>", File: "/etc/php/8.2/fpm/pool.d/shop.conf", PM: "static", MaxChildren: 40,
			WorkerPSS: []int64{60 << 20}, Uptime: 72 * 3600e9},
	})
	o := &advise.Opcache{PHPVersion: "8.2.36", Loaded: true, DirectivesRead: true, Enable: true, ValidateTimestamps: true, RevalidateFreq: 2, MemoryConsumptionB: 128 << 20,
		InternedBufferMiB: 8, MaxAcceleratedFiles: 10000, HasJIT: true,
		Status: &results.OpcacheStatus{Enabled: true, UsedB: 126 << 20, FreeB: 2 << 20, InternedBufferB: 8 << 20, InternedUsedB: 5 << 20,
			CachedScripts: 3100, CachedKeys: 3200, MaxCachedKeys: 16229, Hits: 990000, Misses: 4000, OOMRestarts: 2},
		Realpath: &results.RealpathStatus{UsedB: 300 << 10, SizeB: 4 << 20, Entries: 2100}}
	oa, fs := advise.AdviseOpcache("/etc/php/8.2/fpm/php-fpm.conf", []string{"www", "<shop>"}, "www", o, "", nil)
	a.Opcache = append(a.Opcache, oa)
	a.Findings = append(a.Findings, fs...)
	t := &results.Tune{App: "wordpress", Workload: "front", Recommended: map[string]string{"pm": "static", "pm.max_children": "8"},
		Curves:      []results.Curve{{Label: "knee scan (static pool), knee ≈ 10"}},
		Holdout:     &results.Holdout{StartRPS: 80, RecommendedRPS: 120},
		Trials:      []results.Trial{{Phase: "holdout", Connections: 20}},
		Environment: &results.Environment{Cores: 2, MemoryB: 4 << 30, Versions: map[string]string{"php-fpm": "8.2.36"}}}
	a.MariaDB = &advise.MariaDBAdvice{PID: 812, Socket: "/run/mysqld/mysqld.sock", Version: "10.11.19-MariaDB-0+deb12u1", UptimeS: 3 * 86400,
		MaxConnections: 151, MaxUsedConnections: 149, PoolsMaxChildren: 45, BufferPoolB: 128 << 20, DataIndexB: 300 << 20, HitRate: 0.9384,
		ResidentB: 210 << 20, Knobs: []string{"mariadb.max_connections=187", "mariadb.innodb_buffer_pool_size=384M"}}
	a.Front = &advise.Front{Servers: []advise.WebServer{{Kind: "nginx", Conf: "/etc/nginx/nginx.conf", Workers: 2, WorkerConnections: 768, KeepaliveTimeout: "65",
		Listens: []advise.Listen{{Addr: "*:80", Backlog: 511, At: "/etc/nginx/sites-enabled/default:22"}}}},
		Pools: []advise.PoolFront{{Master: "/etc/php/8.2/fpm/php-fpm.conf", Pool: "www", Listen: "/run/php/php8.2-fpm.sock", PassedBy: []string{"nginx _ (listen *:80)"}},
			{Master: "/etc/php/8.2/fpm/php-fpm.conf", Pool: "<shop>", Listen: "/run/php/shop.sock"}}}
	a.Tune = advise.CompareTune(a, t, "20261120-101500-wordpress", "the newest tune of PHP 8.2 (choose another with --tune RUN-ID)")
	return a
}

func TestAdviceHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	files := []AdviceFile{{Name: "pool www: knobs", Text: "pm=dynamic\npm.max_children=10\n"}, {Name: "/etc/php/8.2/fpm/pool.d/zz-phptune.conf", Text: "[www]\npm.max_children = 10\n"}}
	if err := AdviceHTML(&b, adviceFixture(), files, "2026-11-26 10:40 UTC"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<shop>") || !strings.Contains(page, "&lt;shop&gt;") {
		t.Error("a pool's name reached the page unescaped")
	}
	for _, w := range []string{"http://", "https://", "<script"} {
		if strings.Contains(page, w) {
			t.Errorf("the page holds %q: it must load nothing and run nothing", w)
		}
	}
	for _, w := range []string{`id="pools"`, `id="findings"`, `id="opcache"`, "opcache.memory_consumption=256", "Beside the stored tune 20261120-101500-wordpress", "Recommended drop-ins", "zz-phptune.conf",
		`id="mariadb"`, "mariadb.innodb_buffer_pool_size=384M", "93.84%", `id="front"`, "nginx _ (listen *:80)", "no web server found"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	golden := "testdata/advice.html.golden"
	goldentest.Check(t, golden, b.Bytes())
}
