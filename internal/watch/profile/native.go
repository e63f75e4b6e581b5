package profile

import (
	"path"
	"strings"
)

// MaxStacks bounds the distinct folded stacks a profile keeps; samples of
// further stacks are counted under one "[more stacks]" stack.
const MaxStacks = 50000

// Folded is stacks in the folded format flame graphs are drawn from:
// "root;caller;...;leaf" -> samples.
type Folded map[string]int

// add counts n samples of stack (root first), within MaxStacks.
func (f Folded) add(stack []string, n int) {
	key := strings.Join(stack, ";")
	if _, ok := f[key]; !ok && len(f) >= MaxStacks {
		key = stack[0] + ";[more stacks]"
	}
	f[key] += n
}

// Native is a native profile: perf's samples of a stack's processes.
type Native struct {
	// Samples is every sample kept (the stack's processes); Dropped the
	// samples of other processes (the load generator, the rest of the
	// machine), which perf records too when it samples every CPU.
	Samples int `json:"samples"`
	Dropped int `json:"samples_of_other_processes"`
	// ByRole counts samples by process role (php, web, mariadb).
	ByRole map[string]int `json:"samples_by_role"`
	// Components counts every kept sample by component (Classify).
	Components map[string]int `json:"components"`
	// PHPComponents counts the PHP processes' samples alone.
	PHPComponents map[string]int `json:"php_components"`
	// PHPSelf counts the PHP processes' samples by leaf function.
	PHPSelf map[string]int `json:"php_self"`
	// Folded holds the stacks, each rooted at its role.
	Folded Folded `json:"folded"`
	// JITNamed counts frames named through the JIT's perf map.
	JITNamed int `json:"jit_frames_named,omitempty"`
}

// NativeBuilder sums samples into a Native. Role says which of the
// stack's processes a pid is ("" for one that is not the stack's); JIT,
// when set, names frames in anonymous executable memory; PHPJIT says
// PHP's JIT was on (see Classify).
type NativeBuilder struct {
	Role   func(pid int) string
	JIT    *PerfMap
	PHPJIT bool
	n      Native
}

// roleRoot is the root frame of a role's stacks.
var roleRoot = map[string]string{RolePHP: "php", RoleWeb: "web server", RoleMariaDB: "mariadb"}

// Add counts one sample.
func (b *NativeBuilder) Add(s Sample) {
	if b.n.Folded == nil {
		b.n = Native{ByRole: map[string]int{}, Components: map[string]int{}, PHPComponents: map[string]int{},
			PHPSelf: map[string]int{}, Folded: Folded{}}
	}
	role := b.Role(s.PID)
	if role == "" {
		b.n.Dropped++
		return
	}
	frames := s.Frames
	if b.JIT != nil {
		frames = append([]Frame(nil), frames...)
		for i, f := range frames {
			if f.Anonymous() && f.Symbol == "" {
				if name, ok := b.JIT.Lookup(f.IP); ok {
					frames[i].Symbol = name
					b.n.JITNamed++
				}
			}
		}
	}
	comp := Classify(role, frames, b.PHPJIT)
	b.n.Samples++
	b.n.ByRole[role]++
	b.n.Components[comp]++
	stack := make([]string, 0, len(frames)+1)
	stack = append(stack, roleRoot[role])
	for i := len(frames) - 1; i >= 0; i-- {
		stack = append(stack, FrameName(frames[i]))
	}
	if role == RolePHP {
		b.n.PHPComponents[comp]++
		leaf := "[no stack]"
		if len(frames) > 0 {
			leaf = FrameName(frames[0])
		}
		b.n.PHPSelf[leaf]++
	}
	b.n.Folded.add(stack, 1)
}

// Result returns what was summed.
func (b *NativeBuilder) Result() Native {
	if b.n.Folded == nil {
		return Native{ByRole: map[string]int{}, Components: map[string]int{}, PHPComponents: map[string]int{},
			PHPSelf: map[string]int{}, Folded: Folded{}}
	}
	return b.n
}

// FrameName is a frame as a flame graph shows it: the symbol, "_[k]"
// after the kernel's, "_[j]" after JIT code, "[file]" for code perf could
// not name in a file, "[anon]" for unnamed JIT code.
func FrameName(f Frame) string {
	name := printableName(f.Symbol)
	switch {
	case name != "" && f.Kernel():
		return name + "_[k]"
	case name != "" && f.Anonymous():
		return name + "_[j]"
	case name != "":
		return name
	case f.Anonymous():
		return "[anon]"
	case f.Kernel():
		return "[kernel]"
	case f.DSO != "":
		return "[" + printableName(path.Base(f.DSO)) + "]"
	}
	return "[unknown]"
}
