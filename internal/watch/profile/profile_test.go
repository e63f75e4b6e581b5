package profile

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// roleByComm is the tests' stand-in for the lab's process tree.
func roleByComm(comms map[int]string) func(int) string {
	return func(pid int) string {
		switch c := comms[pid]; {
		case strings.HasPrefix(c, "php-fpm"):
			return RolePHP
		case c == "nginx":
			return RoleWeb
		case c == "mariadbd":
			return RoleMariaDB
		}
		return ""
	}
}

// readFixture parses a captured `perf script` of a WordPress lab under
// load (perf record -a -e cpu-clock -F 49 --call-graph dwarf).
func readFixture(t *testing.T) Native {
	t.Helper()
	b, err := os.ReadFile("testdata/wordpress.perf-script")
	if err != nil {
		t.Fatal(err)
	}
	comms := map[int]string{}
	var samples []Sample
	if err := ReadPerfScript(bytes.NewReader(b), func(s Sample) {
		comms[s.PID] = s.Comm
		samples = append(samples, s)
	}); err != nil {
		t.Fatal(err)
	}
	nb := NativeBuilder{Role: roleByComm(comms)}
	for _, s := range samples {
		nb.Add(s)
	}
	return nb.Result()
}

func TestWordPressFixture(t *testing.T) {
	n := readFixture(t)
	if n.Samples < 500 || n.ByRole[RolePHP] < 400 || n.ByRole[RoleMariaDB] == 0 || n.ByRole[RoleWeb] == 0 {
		t.Fatalf("samples %d by role %v: the fixture has ~540 php-fpm, ~60 mariadbd and some nginx samples", n.Samples, n.ByRole)
	}
	if n.Dropped == 0 {
		t.Error("wrk's samples were kept: they are not the stack's")
	}
	other := float64(n.PHPComponents[CompOther]) / float64(n.ByRole[RolePHP])
	if other > 0.10 {
		t.Errorf("other holds %.1f%% of the PHP samples (> 10%%): %v", 100*other, Top(n.PHPComponents, n.ByRole[RolePHP], 0))
	}
	if n.PHPComponents[CompExecutor] == 0 || n.PHPComponents[CompStrings] == 0 || n.PHPComponents[CompAllocator] == 0 {
		t.Errorf("executor, strings/arrays and the allocator all appear in WordPress's samples: %v", n.PHPComponents)
	}
	kernel := 0
	for c, v := range n.PHPComponents {
		if strings.HasPrefix(c, "kernel") {
			kernel += v
		}
	}
	if kernel == 0 {
		t.Errorf("no kernel component in the PHP samples: %v", n.PHPComponents)
	}
	found := false
	for k := range n.Folded {
		if strings.HasPrefix(k, "php;") && strings.HasSuffix(k, ";execute_ex") {
			found = true
		}
		if strings.Contains(k, "\n") {
			t.Fatalf("a folded stack holds a newline: %q", k)
		}
	}
	if !found {
		t.Error("no php;...;execute_ex stack folded")
	}
	t.Logf("PHP components: %v", Top(n.PHPComponents, n.ByRole[RolePHP], 0))
}

func TestClassify(t *testing.T) {
	php := func(syms ...string) []Frame {
		var fs []Frame
		for _, s := range syms {
			dso := "/usr/sbin/php-fpm8.2"
			switch {
			case strings.HasSuffix(s, "[k]"):
				s, dso = strings.TrimSuffix(s, "[k]"), "[kernel.kallsyms]"
			case strings.HasSuffix(s, "[libc]"):
				s, dso = strings.TrimSuffix(s, "[libc]"), "/usr/lib/x86_64-linux-gnu/libc.so.6"
			case strings.HasSuffix(s, "[anon]"):
				s, dso = strings.TrimSuffix(s, "[anon]"), "/tmp/perf-42.map"
			case strings.HasSuffix(s, "[opcache]"):
				s, dso = strings.TrimSuffix(s, "[opcache]"), "/usr/lib/php/20220829/opcache.so"
			}
			fs = append(fs, Frame{Symbol: s, DSO: dso, IP: 1})
		}
		return fs
	}
	for _, c := range []struct {
		name   string
		role   string
		frames []Frame
		want   string
	}{
		{"executor leaf", RolePHP, php("execute_ex", "zend_execute"), CompExecutor},
		{"static function under the executor", RolePHP, php("", "", "execute_ex"), CompExecutor},
		{"allocator", RolePHP, php("_emalloc", "zend_hash_str_add", "execute_ex"), CompAllocator},
		{"hash", RolePHP, php("zend_hash_find", "", "execute_ex"), CompStrings},
		{"libc malloc", RolePHP, php("_int_malloc[libc]", "malloc[libc]", "execute_ex"), CompAllocator},
		{"libc memcpy", RolePHP, php("__memmove_avx_unaligned_erms[libc]", "zend_string_concat2"), CompLibc},
		{"pcre jit", RolePHP, php("[anon]", "pcre2_jit_match_8", "php_pcre_match_impl"), CompPCRE},
		{"php jit named", RolePHP, php("JIT$wp_hook[anon]", "execute_ex"), CompJIT},
		{"php jit unnamed", RolePHP, php("[anon]", "execute_ex"), CompJIT},
		{"anon without php jit", RolePHP, php("[anon]"), CompPCRE},
		{"opcache unnamed", RolePHP, php("[opcache]", "persistent_compile_file[opcache]"), CompCompiler},
		{"page fault", RolePHP, php("clear_page_erms[k]", "do_anonymous_page[k]", "handle_mm_fault[k]", "exc_page_fault[k]", "asm_exc_page_fault[k]", "_emalloc"), CompKMem},
		{"socket write", RolePHP, php("_raw_spin_unlock_irqrestore[k]", "try_to_wake_up[k]", "sock_def_readable[k]", "unix_stream_sendmsg[k]", "sock_write_iter[k]", "vfs_write[k]", "ksys_write[k]", "do_syscall_64[k]", "entry_SYSCALL_64_after_hwframe[k]", "write[libc]"), CompKNet},
		{"file read", RolePHP, php("ext4_file_read_iter[k]", "vfs_read[k]", "ksys_read[k]", "do_syscall_64[k]"), CompKFiles},
		{"stat", RolePHP, php("__d_lookup_rcu[k]", "lookup_fast[k]", "walk_component[k]", "path_lookupat[k]", "filename_lookup[k]", "vfs_statx[k]", "__do_sys_newfstatat[k]", "do_syscall_64[k]"), CompKFiles},
		{"timer interrupt", RolePHP, php("irqentry_exit_to_user_mode[k]", "asm_sysvec_apic_timer_interrupt[k]"), CompKSched},
		{"unknown kernel", RolePHP, php("something_new[k]"), CompKOther},
		{"no stack", RolePHP, nil, CompOther},
		{"nginx whole", RoleWeb, php("tcp_sendmsg[k]"), CompWeb},
		{"mariadb whole", RoleMariaDB, nil, CompMariaDB},
		{"builtin", RolePHP, php("zif_date", "execute_ex"), CompBuiltins},
	} {
		if got := Classify(c.role, c.frames, c.name != "anon without php jit"); got != c.want {
			t.Errorf("%s: Classify = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestReadPerfScriptHeaders(t *testing.T) {
	in := "my evil name 12/13 100.5: cpu-clock:\n\t 1000 foo(int, char) (/usr/lib/x.so)\n\tffffffffffffffff [unknown] ([unknown])\n\nnginx 5/5\n\t  ffffffff81000000 tcp_sendmsg ([kernel.kallsyms])\n"
	var got []Sample
	if err := ReadPerfScript(strings.NewReader(in), func(s Sample) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Comm != "my evil name" || got[0].PID != 12 || got[0].TID != 13 || len(got[0].Frames) != 1 {
		t.Fatalf("samples %+v", got)
	}
	if f := got[0].Frames[0]; f.Symbol != "foo(int, char)" || f.DSO != "/usr/lib/x.so" || f.IP != 0x1000 {
		t.Fatalf("frame %+v", f)
	}
	if !got[1].Frames[0].Kernel() {
		t.Fatalf("kernel frame not seen as the kernel's: %+v", got[1].Frames[0])
	}
	for _, bad := range []string{"\t1000 foo (x)\n", "no pid here\n", "a 1/1\n\tzz foo (x)\n"} {
		if err := ReadPerfScript(strings.NewReader(bad), func(Sample) {}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestPerfMap(t *testing.T) {
	var m PerfMap
	m.Add(strings.NewReader("7f0000001000 100 JIT$foo\n7f0000000000 80 JIT$bar;baz\nnot a line\nffffffffffffff00 1000 wraps\n7f0000002000 0 empty\n"))
	if m.Len() != 2 || m.Skipped != 3 {
		t.Fatalf("entries %d skipped %d, want 2 and 3", m.Len(), m.Skipped)
	}
	for ip, want := range map[uint64]string{0x7f0000001000: "JIT$foo", 0x7f00000010ff: "JIT$foo", 0x7f0000000010: "JIT$bar_baz", 0x7f0000001100: "", 0x10: ""} {
		got, ok := m.Lookup(ip)
		if got != want || ok != (want != "") {
			t.Errorf("Lookup(%x) = %q, %v; want %q", ip, got, ok, want)
		}
	}
}

func TestReadCollapsed(t *testing.T) {
	var p PHP
	p.ReadCollapsed(strings.NewReader("index.php;wp;WP_Hook::apply_filters;do_thing [plugins/akismet] 3\nindex.php;wp;WP_Hook::apply_filters 2\nindex.php;f;f 1\nbroken\nx -1\n"))
	if p.Samples != 6 || p.Skipped != 2 {
		t.Fatalf("samples %d skipped %d", p.Samples, p.Skipped)
	}
	if p.Inclusive["WP_Hook::apply_filters"] != 5 || p.Self["do_thing"] != 3 || p.Self["WP_Hook::apply_filters"] != 2 {
		t.Fatalf("inclusive %v self %v", p.Inclusive, p.Self)
	}
	if p.Inclusive["f"] != 1 {
		t.Fatalf("recursion counted twice: %v", p.Inclusive)
	}
	if p.Plugins["plugins/akismet"] != 3 {
		t.Fatalf("plugins %v", p.Plugins)
	}
	if top := Top(p.Inclusive, p.Samples, 1); len(top) != 1 || top[0].Name != "index.php" || top[0].Share != 1 {
		t.Fatalf("top %+v", top)
	}
}

func FuzzReadPerfScript(f *testing.F) {
	b, _ := os.ReadFile("testdata/wordpress.perf-script")
	f.Add(string(b[:min(len(b), 4000)]))
	f.Add("a 1/1\n\t10 x (y)\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		nb := NativeBuilder{Role: func(int) string { return RolePHP }}
		_ = ReadPerfScript(strings.NewReader(in), func(s Sample) {
			if len(s.Frames) > MaxFrames {
				t.Fatalf("%d frames kept", len(s.Frames))
			}
			nb.Add(s)
		})
		for k := range nb.Result().Folded {
			if strings.ContainsAny(k, "\n\r") {
				t.Fatalf("folded stack with a newline: %q", k)
			}
		}
	})
}

func FuzzReadCollapsed(f *testing.F) {
	f.Add("a;b;c 3\n")
	f.Add("a;b [plugins/x] 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		var p PHP
		p.ReadCollapsed(strings.NewReader(in))
		sum := 0
		for _, v := range p.Self {
			sum += v
		}
		if sum != p.Samples {
			t.Fatalf("self sums to %d, samples %d", sum, p.Samples)
		}
	})
}

func FuzzPerfMap(f *testing.F) {
	f.Add("7f0000001000 100 JIT$foo\n", uint64(0x7f0000001010))
	f.Fuzz(func(t *testing.T, in string, ip uint64) {
		var m PerfMap
		m.Add(strings.NewReader(in))
		if name, ok := m.Lookup(ip); ok && (name == "" || strings.ContainsAny(name, ";\n")) {
			t.Fatalf("Lookup gave %q", name)
		}
	})
}
