package profile

import (
	"path"
	"strings"
)

// Components a native sample is counted in. The PHP workers' samples are
// split by what their code does; the web server's and the database's are
// counted whole, by process.
const (
	CompExecutor  = "Zend VM executor"
	CompBuiltins  = "PHP built-in functions"
	CompCompiler  = "compiler/opcache"
	CompAllocator = "allocator"
	CompStrings   = "strings/arrays"
	CompPCRE      = "PCRE (regular expressions)"
	CompJIT       = "PHP JIT code"
	CompMySQL     = "mysqlnd/PDO"
	CompLibc      = "libc"
	CompLibs      = "other libraries"
	CompKNet      = "kernel: network"
	CompKMem      = "kernel: page faults/memory"
	CompKFiles    = "kernel: files (stat/open/read)"
	CompKSched    = "kernel: scheduling/interrupts"
	CompKOther    = "kernel: other"
	CompWeb       = "web server"
	CompMariaDB   = "MariaDB"
	CompOther     = "other"
)

// Roles of the processes a profile keeps (see Classify).
const (
	RolePHP     = "php"     // php-fpm (master and workers), or PHP inside the web server
	RoleWeb     = "web"     // the web server (nginx, Apache without PHP...)
	RoleMariaDB = "mariadb" // mariadbd
)

// Classify names the component of a sample of a process with role. A PHP
// process's sample is classified by its kernel part when the leaf is the
// kernel's (by the outermost frame that says what the kernel was asked:
// a socket call, a page fault, a file lookup), else by the frame nearest
// the leaf that belongs to a family (the allocator, PCRE, strings and
// arrays, libc...), the executor last: it is the ancestor of nearly all.
// phpJIT says PHP's JIT was on: without it, unnamed anonymous code is
// PCRE's JIT, the only other code PHP generates.
func Classify(role string, frames []Frame, phpJIT bool) string {
	switch role {
	case RoleWeb:
		return CompWeb
	case RoleMariaDB:
		return CompMariaDB
	}
	if len(frames) == 0 {
		return CompOther
	}
	if frames[0].Kernel() {
		k := 0
		for k < len(frames) && frames[k].Kernel() {
			k++
		}
		return classifyKernel(frames[:k])
	}
	unnamedUnderJIT := false
	for i, f := range frames {
		if f.Kernel() {
			continue
		}
		if f.Anonymous() {
			if strings.HasPrefix(f.Symbol, "JIT$") || strings.HasPrefix(f.Symbol, "TRACE-") {
				return CompJIT
			}
			// Unnamed anonymous code: PCRE's JIT when a PCRE frame
			// calls it, else PHP's JIT without a map.
			for _, g := range frames[i+1:] {
				if isPCRE(g.Symbol) {
					return CompPCRE
				}
				if g.Symbol != "" {
					break
				}
			}
			if !phpJIT {
				return CompPCRE
			}
			unnamedUnderJIT = true
			continue
		}
		if c := classifyUser(f); c != "" {
			if unnamedUnderJIT && c == CompExecutor {
				return CompJIT
			}
			return c
		}
	}
	if unnamedUnderJIT {
		return CompJIT
	}
	return CompOther
}

// classifyUser names a user-space frame's family, or "" to look further
// toward the root.
func classifyUser(f Frame) string {
	s, lib := f.Symbol, path.Base(f.DSO)
	switch {
	case isAllocator(s):
		return CompAllocator
	case isPCRE(s) || strings.HasPrefix(lib, "libpcre2"):
		return CompPCRE
	case isStrings(s):
		return CompStrings
	case isCompiler(s) || lib == "opcache.so":
		return CompCompiler
	case isMySQL(s) || lib == "mysqlnd.so" || lib == "mysqli.so" || strings.HasPrefix(lib, "pdo"):
		return CompMySQL
	case strings.HasPrefix(lib, "libc.so") || strings.HasPrefix(lib, "libm.so") || lib == "ld-linux-x86-64.so.2" || f.DSO == "inlined" && isLibcString(s):
		return CompLibc
	case isExecutor(s):
		return CompExecutor
	case strings.HasPrefix(s, "zif_") || strings.HasPrefix(s, "zim_") || strings.HasPrefix(s, "php_") || strings.HasPrefix(s, "ZEND_FUNCTION"):
		return CompBuiltins
	case s == "" && isPHPBinary(lib):
		return "" // a static function of PHP's: its caller says more
	case strings.HasSuffix(lib, ".so") || strings.Contains(lib, ".so."):
		if isPHPExtension(f.DSO) {
			return CompBuiltins
		}
		return CompLibs
	case s != "" && isPHPBinary(lib):
		return CompExecutor // the engine's other exported functions
	}
	return ""
}

func isPHPBinary(lib string) bool {
	return strings.HasPrefix(lib, "php-fpm") || strings.HasPrefix(lib, "php") && !strings.Contains(lib, ".so") || strings.HasPrefix(lib, "libphp")
}

func isPHPExtension(dso string) bool {
	return strings.Contains(dso, "/lib/php/") && strings.HasSuffix(dso, ".so")
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func isAllocator(s string) bool {
	return hasAnyPrefix(s, "_emalloc", "_efree", "_erealloc", "_ecalloc", "_safe_emalloc", "_safe_erealloc",
		"_safe_malloc", "zend_mm_", "_zend_mm_", "_estrdup", "_estrndup", "__zend_malloc", "__zend_calloc",
		"__zend_realloc", "zend_alloc", "emalloc", "efree", "erealloc") ||
		s == "malloc" || s == "free" || s == "realloc" || s == "calloc" || s == "cfree" ||
		hasAnyPrefix(s, "_int_malloc", "_int_free", "_int_realloc", "__libc_malloc", "__libc_free",
			"__libc_calloc", "__libc_realloc", "malloc_consolidate", "tcache_", "unlink_chunk", "sysmalloc")
}

func isPCRE(s string) bool {
	return hasAnyPrefix(s, "pcre2_", "php_pcre", "pcre_get_compiled_regex", "zif_preg_", "preg_")
}

func isStrings(s string) bool {
	return hasAnyPrefix(s, "zend_hash", "_zend_hash", "zend_array", "_zend_new_array", "zend_new_array",
		"zend_string", "zend_str", "zend_memnstr", "smart_str", "php_str", "zend_symtable", "php_array",
		"zif_str", "zif_array", "zif_implode", "zif_explode", "php_implode", "php_explode", "zend_sort",
		"zend_insert_sort", "zif_sprintf", "php_formatted_print", "zif_substr", "zif_trim", "php_trim",
		"zend_ulong_to_str", "zend_long_to_str", "zend_double_to_str", "smart_string", "zend_interned_string",
		"zend_concat", "concat_function", "zend_init_rope", "rc_dtor_func", "zif_in_array", "php_search_array",
		"zif_md5", "make_digest", "PHP_MD5", "zif_sha1", "PHP_SHA1", "zif_json", "php_json")
}

func isLibcString(s string) bool {
	return hasAnyPrefix(s, "__mem", "__str", "mem", "str")
}

func isCompiler(s string) bool {
	return hasAnyPrefix(s, "compile_file", "compile_string", "zend_compile", "zendparse", "lex_scan",
		"zend_ast", "persistent_compile_file", "zend_accel", "accel_", "zend_optimize", "zend_jit_",
		"zend_persist", "zend_file_cache", "zend_build_cfg", "zend_ssa", "zend_inference", "zend_emit_op",
		"zend_do_", "zend_lex", "zendlex", "zend_prepare_string_for_scanning", "open_file_for_scanning",
		"zend_stream_", "php_stream_open_for_zend", "zend_resolve_path", "php_resolve_path")
}

func isMySQL(s string) bool {
	return hasAnyPrefix(s, "mysqlnd", "php_mysqlnd", "mysqli", "zif_mysqli", "zim_mysqli", "pdo_", "zim_PDO",
		"php_mysqli")
}

func isExecutor(s string) bool {
	return hasAnyPrefix(s, "execute_ex", "zend_execute", "ZEND_", "zend_vm_", "execute_internal",
		"zend_call_function", "zend_call_known", "zend_std_", "zend_fetch_", "zend_is_identical",
		"zend_compare", "compare_function", "zend_objects_", "zend_object_std", "zend_closure", "zend_generator",
		"zend_do_fcall", "zend_lookup_class", "zend_update_class_constants", "zend_verify_", "zend_hash_find_known")
}

// Kernel families, matched against the kernel part of a stack from its
// outermost frame in: the first frame of a family says what the process
// asked of the kernel (a page fault inside a socket read is the read's).
// Generic entry and dispatch frames match no family and are passed over.
var kernelFamilies = []struct {
	comp     string
	prefixes []string
}{
	{CompKMem, []string{"asm_exc_page_fault", "exc_page_fault", "do_user_addr_fault", "handle_mm_fault",
		"__handle_mm_fault", "do_anonymous_page", "do_huge_pmd", "clear_page", "__x64_sys_brk", "__do_sys_brk",
		"do_brk", "__x64_sys_mmap", "__x64_sys_munmap", "__vm_munmap", "do_mmap", "mmap_region", "__x64_sys_madvise",
		"do_madvise", "__x64_sys_mprotect", "do_mprotect", "unmap_region", "zap_", "tlb_", "alloc_pages",
		"__alloc_pages", "get_page_from_freelist", "do_fault", "filemap_map_pages", "wp_page", "do_wp_page",
		"do_exit", "mmput", "exit_mmap", "copy_page", "__pte_alloc", "pte_alloc"}},
	{CompKNet, []string{"__x64_sys_sendto", "__x64_sys_recvfrom", "__x64_sys_sendmsg", "__x64_sys_recvmsg",
		"__x64_sys_accept", "__x64_sys_accept4", "__x64_sys_connect", "__x64_sys_socket", "__x64_sys_shutdown",
		"__x64_sys_setsockopt", "__x64_sys_getsockopt", "__x64_sys_getsockname", "__x64_sys_getpeername",
		"__sys_", "sock_", "__sock_", "sk_", "__sk_", "tcp_", "__tcp_", "inet_", "__inet_", "inet6_", "unix_",
		"ip_", "__ip_", "ipv6_", "__dev_queue_xmit", "dev_hard_start_xmit", "loopback_xmit", "net_rx_action",
		"__netif", "netif_", "napi_", "__napi", "process_backlog", "skb_", "__skb", "do_softirq", "__do_softirq",
		"__local_bh_enable_ip", "sockfd_lookup", "__sys_accept4", "do_accept"}},
	{CompKFiles, []string{"__x64_sys_openat", "__x64_sys_open", "__x64_sys_newstat", "__x64_sys_newlstat",
		"__x64_sys_newfstatat", "__x64_sys_statx", "__x64_sys_access", "__x64_sys_faccessat", "__x64_sys_readlink",
		"__x64_sys_getcwd", "__x64_sys_lstat", "__x64_sys_stat", "__x64_sys_getdents", "__do_sys_newstat",
		"__do_sys_newlstat", "__do_sys_newfstatat", "vfs_statx", "do_sys_open", "do_filp_open", "path_openat",
		"path_lookupat", "filename_lookup", "link_path_walk", "walk_component", "lookup_fast", "__d_lookup",
		"d_lookup", "generic_permission", "inode_permission", "may_open", "ext4_", "filemap_read",
		"generic_file_read", "copy_page_to_iter", "do_readlinkat", "getname", "complete_walk", "step_into"}},
	{CompKSched, []string{"schedule", "__schedule", "finish_task_switch", "pick_next_task", "try_to_wake_up",
		"do_nanosleep", "futex_", "__x64_sys_futex", "ep_poll", "do_epoll_wait", "__x64_sys_epoll_wait",
		"__x64_sys_epoll_pwait", "schedule_hrtimeout", "irqentry_exit", "exit_to_user_mode", "__irq_exit_rcu",
		"irq_exit_rcu", "asm_sysvec_", "sysvec_", "asm_common_interrupt", "common_interrupt", "hrtimer_",
		"__hrtimer", "tick_", "__sysvec", "smp_call_function", "__x64_sys_sched_yield", "do_sched_yield",
		"__x64_sys_nanosleep", "__x64_sys_clock_nanosleep", "__x64_sys_poll", "do_sys_poll", "do_select",
		"__x64_sys_select", "__x64_sys_wait4", "do_wait", "__x64_sys_pause", "sigsuspend", "_raw_spin_unlock_irq"}},
}

func classifyKernel(frames []Frame) string {
	for i := len(frames) - 1; i >= 0; i-- {
		s := frames[i].Symbol
		for _, fam := range kernelFamilies {
			if hasAnyPrefix(s, fam.prefixes...) {
				return fam.comp
			}
		}
	}
	return CompKOther
}
