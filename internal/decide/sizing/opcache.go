package sizing

import (
	"fmt"

	"github.com/phptune/phptune/internal/model/knob"
	"github.com/phptune/phptune/internal/model/results"
)

// opcache's knobs.
const (
	KnobOpcacheMemory   = "opcache.memory_consumption"
	KnobInternedStrings = "opcache.interned_strings_buffer"
	KnobMaxFiles        = "opcache.max_accelerated_files"
	KnobJITBuffer       = "opcache.jit_buffer_size"
)

// phpPrimes is PHP's table of hash sizes (zend_accelerator_hash.c): opcache
// rounds max_accelerated_files up to the next of them, which is the number
// of keys it can hold (max_cached_keys).
var phpPrimes = []int64{5, 11, 19, 53, 107, 223, 463, 983, 1979, 3907, 7963, 16229, 32531, 65407, 130987, 262237, 524521, 1048793}

// keySlots is max_cached_keys for a max_accelerated_files value.
func keySlots(files int64) int64 {
	for _, p := range phpPrimes {
		if p >= files {
			return p
		}
	}
	return phpPrimes[len(phpPrimes)-1]
}

// opcacheReading is the fullest opcache the readings saw: opcache is shared
// by the pool, so each reading is the whole cache; the largest figures of
// the trials are what the sizes must hold.
type opcacheReading struct {
	s      results.OpcacheStatus
	jit    *results.JITStatus
	trials []int
}

func fullestOpcache(rs []Reading) (*opcacheReading, string) {
	var agg *opcacheReading
	why := "the stack reported no opcache figures"
	for _, r := range rs {
		if r.Bench == nil || r.Bench.Runtime == nil {
			continue
		}
		rt := r.Bench.Runtime
		op := rt.Opcache
		if op == nil {
			for _, e := range rt.Errors {
				why = e
				break
			}
			continue
		}
		if !op.Enabled {
			why = "opcache reported itself disabled"
			continue
		}
		if agg == nil {
			agg = &opcacheReading{s: *op}
		}
		a := &agg.s
		if op.UsedB+op.WastedB > a.UsedB+a.WastedB {
			a.UsedB, a.WastedB, a.FreeB = op.UsedB, op.WastedB, op.FreeB
		}
		a.CacheFull = a.CacheFull || op.CacheFull
		a.InternedUsedB, a.InternedStrings = max(a.InternedUsedB, op.InternedUsedB), max(a.InternedStrings, op.InternedStrings)
		a.InternedBufferB = max(a.InternedBufferB, op.InternedBufferB)
		a.CachedKeys, a.CachedScripts, a.MaxCachedKeys = max(a.CachedKeys, op.CachedKeys), max(a.CachedScripts, op.CachedScripts), max(a.MaxCachedKeys, op.MaxCachedKeys)
		a.OOMRestarts, a.HashRestarts = max(a.OOMRestarts, op.OOMRestarts), max(a.HashRestarts, op.HashRestarts)
		if j := op.JIT; j != nil && j.On && (agg.jit == nil || j.BufferB-j.BufferFreeB > agg.jit.BufferB-agg.jit.BufferFreeB) {
			jc := *j
			agg.jit = &jc
		}
		agg.trials = append(agg.trials, r.Trial)
	}
	return agg, why
}

// decideOpcache sizes opcache's memory, its interned strings buffer, its
// key table and, when the JIT is on, the JIT's buffer.
func decideOpcache(cfg knob.Config, in Inputs) []results.SizeDecision {
	jitOn := cfg.Bytes(KnobJITBuffer) > 0 && cfg["opcache.jit"] != "off"
	knobs := []string{KnobOpcacheMemory, KnobInternedStrings, KnobMaxFiles}
	if jitOn {
		knobs = append(knobs, KnobJITBuffer)
	}
	why := ""
	agg, noData := fullestOpcache(in.Readings)
	switch {
	case !cfg.On("opcache.enable"):
		why = "opcache is off in the recommendation"
	case agg == nil:
		why = noData
	}
	if why != "" {
		var out []results.SizeDecision
		for _, k := range knobs {
			out = append(out, notRead(cfg, k, why))
		}
		return out
	}
	u := opcacheUseOf(cfg, agg.s)
	// The interned strings buffer lives inside memory_consumption: decide
	// it first, so the memory grows with it and the scripts keep theirs.
	di := decideInterned(cfg, agg, u)
	dm := decideOpcacheMemory(cfg, agg, u)
	dk := decideMaxFiles(cfg, agg, u)
	out := []results.SizeDecision{dm, di, dk}
	if jitOn {
		out = append(out, decideJIT(cfg, agg))
	}
	return out
}

const oneMiB = 1 << 20

// opcacheUse is how full opcache's parts were, against the sizes cfg
// set before any is decided.
type opcacheUse struct {
	iMB, mMB int64 // the interned strings buffer and memory_consumption, MiB
	iBuf     int64 // the interned strings buffer, bytes
	// area is what scripts get beside the interned strings, scripts
	// what they use of it.
	area, scripts      int64
	maxKeys            int64 // slots of the key table
	memShare, keyShare float64
	// Keys and memory: cache_full does not say which ran out; it is put
	// on the fuller of the two.
	memNear, keysNear bool
}

func opcacheUseOf(cfg knob.Config, s results.OpcacheStatus) opcacheUse {
	u := opcacheUse{iMB: cfg.Int(KnobInternedStrings), mMB: cfg.Int(KnobOpcacheMemory), iBuf: s.InternedBufferB}
	if u.iBuf <= 0 {
		u.iBuf = u.iMB * oneMiB
	}
	u.maxKeys = s.MaxCachedKeys
	if u.maxKeys <= 0 {
		u.maxKeys = keySlots(cfg.Int(KnobMaxFiles))
	}
	u.keyShare = share(s.CachedKeys, u.maxKeys)
	u.area = (u.mMB - u.iMB) * oneMiB
	u.scripts = max(s.UsedB+s.WastedB-u.iBuf, 0)
	u.memShare = share(u.scripts, u.area)
	u.memNear = u.memShare > NearFull || s.OOMRestarts > 0 || (s.CacheFull && u.memShare >= u.keyShare)
	u.keysNear = u.keyShare > NearFull || s.HashRestarts > 0 || (s.CacheFull && u.keyShare > u.memShare)
	return u
}

// decideInterned sizes the interned strings buffer (and sets it in cfg).
func decideInterned(cfg knob.Config, agg *opcacheReading, u opcacheUse) results.SizeDecision {
	s := agg.s
	iShare := share(s.InternedUsedB, u.iBuf)
	di := decision(cfg, KnobInternedStrings, agg.trials)
	di.Figures["size_bytes"], di.Figures["used_bytes"], di.Figures["used_share"], di.Figures["strings"] = b2f(u.iBuf), b2f(s.InternedUsedB), iShare, b2f(s.InternedStrings)
	if iShare > NearFull {
		set(cfg, &di, roundUp(int64(Headroom*float64(s.InternedUsedB)), 8*oneMiB)/oneMiB)
		di.Reason = fmt.Sprintf("%s %s → %s: interned strings use %s of %s (%s); %.0f× that, rounded up to a multiple of 8 MiB (a full buffer leaves new strings to each worker's own memory)",
			di.Action, di.From, di.To, mib(s.InternedUsedB), mib(u.iBuf), pct(iShare), Headroom)
	} else {
		di.Action = ActionKept
		di.Reason = fmt.Sprintf("kept %s: interned strings use %s of %s (%s), %d strings", di.From, mib(s.InternedUsedB), mib(u.iBuf), pct(iShare), s.InternedStrings)
	}
	return di
}

// decideOpcacheMemory sizes memory_consumption: the scripts' room and
// the interned strings buffer as decided in cfg.
func decideOpcacheMemory(cfg knob.Config, agg *opcacheReading, u opcacheUse) results.SizeDecision {
	s := agg.s
	newIMB := cfg.Int(KnobInternedStrings)
	dm := decision(cfg, KnobOpcacheMemory, agg.trials)
	dm.Figures["size_bytes"], dm.Figures["scripts_used_bytes"], dm.Figures["scripts_area_bytes"], dm.Figures["used_share"] = b2f(u.mMB*oneMiB), b2f(u.scripts), b2f(u.area), u.memShare
	dm.Figures["oom_restarts"], dm.Figures["cache_full"] = float64(s.OOMRestarts), bool2f(s.CacheFull)
	state := fmt.Sprintf("scripts use %s of the %s beside the interned strings (%s)", mib(u.scripts), mib(u.area), pct(u.memShare))
	switch {
	case u.memNear:
		target := int64(Headroom * float64(u.scripts))
		cause := ""
		if s.OOMRestarts > 0 || s.CacheFull {
			// A restart empties the cache and cache_full stops it
			// growing: the use read afterwards understates the need.
			target = max(target, int64(Headroom*float64(u.area)))
			if s.OOMRestarts > 0 {
				cause += fmt.Sprintf(", %d out-of-memory restarts", s.OOMRestarts)
			}
			if s.CacheFull {
				cause += ", cache full"
			}
			cause += " (so the need is at least the whole area)"
		}
		set(cfg, &dm, max(roundUp(target+newIMB*oneMiB, 16*oneMiB)/oneMiB, u.mMB+newIMB-u.iMB))
		dm.Reason = fmt.Sprintf("%s %s → %s: %s%s; %.0f× that plus the interned strings, rounded up to a multiple of 16 MiB", dm.Action, dm.From, dm.To, state, cause, Headroom)
	case newIMB > u.iMB:
		set(cfg, &dm, u.mMB+newIMB-u.iMB)
		dm.Reason = fmt.Sprintf("%s %s → %s: the interned strings buffer grows by %d MiB inside it, so scripts keep their %s; %s", dm.Action, dm.From, dm.To, newIMB-u.iMB, mib(u.area), state)
	default:
		dm.Action = ActionKept
		dm.Reason = fmt.Sprintf("kept %s: %s; no out-of-memory restart, cache not full", dm.From, state)
	}
	return dm
}

// decideMaxFiles sizes max_accelerated_files, the key table.
func decideMaxFiles(cfg knob.Config, agg *opcacheReading, u opcacheUse) results.SizeDecision {
	s := agg.s
	dk := decision(cfg, KnobMaxFiles, agg.trials)
	dk.Figures["cached_keys"], dk.Figures["max_cached_keys"], dk.Figures["cached_scripts"], dk.Figures["used_share"], dk.Figures["hash_restarts"] = b2f(s.CachedKeys), b2f(u.maxKeys), b2f(s.CachedScripts), u.keyShare, float64(s.HashRestarts)
	keysState := fmt.Sprintf("%d keys (%d scripts) in %d slots (%s)", s.CachedKeys, s.CachedScripts, u.maxKeys, pct(u.keyShare))
	if !u.keysNear {
		dk.Action = ActionKept
		dk.Reason = fmt.Sprintf("kept %s: %s; no hash restart", dk.From, keysState)
		return dk
	}
	target := int64(Headroom * float64(s.CachedKeys))
	if s.HashRestarts > 0 || s.CacheFull {
		target = max(target, int64(Headroom*float64(u.maxKeys)))
	}
	set(cfg, &dk, keySlots(target))
	dk.Reason = fmt.Sprintf("%s %s → %s: %s, %d hash restarts; %.0f× that, as PHP's next prime (it rounds the setting up to one)", dk.Action, dk.From, dk.To, keysState, s.HashRestarts, Headroom)
	return dk
}

// decideJIT sizes the JIT's buffer from what the JIT wrote into it: a full
// buffer stops the JIT compiling (the rest runs interpreted), it is not
// restarted.
func decideJIT(cfg knob.Config, agg *opcacheReading) results.SizeDecision {
	if agg.jit == nil {
		return notRead(cfg, KnobJITBuffer, "opcache_get_status reports the JIT off (its buffer was not used)")
	}
	j := agg.jit
	used := j.BufferB - j.BufferFreeB
	sh := share(used, j.BufferB)
	d := decision(cfg, KnobJITBuffer, agg.trials)
	d.Figures["size_bytes"], d.Figures["used_bytes"], d.Figures["used_share"] = b2f(j.BufferB), b2f(used), sh
	if sh > NearFull {
		set(cfg, &d, roundUp(int64(Headroom*float64(used)), 16<<20))
		d.Reason = fmt.Sprintf("%s %s → %s: the JIT wrote %s of its %s buffer (%s); %.0f× that, rounded up to a multiple of 16 MiB", d.Action, d.From, d.To, mib(used), mib(j.BufferB), pct(sh), Headroom)
	} else {
		d.Action = ActionKept
		d.Reason = fmt.Sprintf("kept %s: the JIT wrote %s of its %s buffer (%s)", d.From, mib(used), mib(j.BufferB), pct(sh))
	}
	return d
}

// KeySlots is the number of keys opcache can hold with
// max_accelerated_files set to files: PHP rounds the setting up to the
// next prime of its table (zend_accelerator_hash.c).
func KeySlots(files int64) int64 { return keySlots(files) }
