package seal

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
)

// Attempt is a destination processes in the seal tried to reach and how
// many times: TCP connection attempts, or UDP datagrams sent before the
// refusal came back.
type Attempt struct {
	Dest  netip.AddrPort
	Proto string // "tcp" or "udp"
	Count uint64
}

// String is "tcp 127.0.0.1:3306".
func (a Attempt) String() string { return a.Proto + " " + a.Dest.String() }

// parseAttempts reads the attempts out of `nft -j list table inet
// phptune_seal` (or `list set`): the elements of the counting sets, each a
// concatenation of address, protocol and port with a counter. The result
// is sorted by count, most first, then by destination.
func parseAttempts(data []byte) ([]Attempt, error) {
	var doc struct {
		Nftables []struct {
			Set *struct {
				Name string            `json:"name"`
				Elem []json.RawMessage `json:"elem"`
			} `json:"set"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("nft's JSON: %v", err)
	}
	var out []Attempt
	for _, o := range doc.Nftables {
		if o.Set == nil || (o.Set.Name != set4 && o.Set.Name != set6) {
			continue
		}
		for _, raw := range o.Set.Elem {
			a, err := parseElem(raw)
			if err != nil {
				return nil, fmt.Errorf("nft's set %s: %v", o.Set.Name, err)
			}
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if c := out[i].Dest.Compare(out[j].Dest); c != 0 {
			return c < 0
		}
		return out[i].Proto < out[j].Proto
	})
	return out, nil
}

// parseElem reads one element: {"elem": {"val": {"concat": [addr, proto,
// port]}, "counter": {"packets": N, "bytes": M}}}.
func parseElem(raw json.RawMessage) (Attempt, error) {
	var e struct {
		Elem struct {
			Val struct {
				Concat []json.RawMessage `json:"concat"`
			} `json:"val"`
			Counter *struct {
				Packets uint64 `json:"packets"`
			} `json:"counter"`
		} `json:"elem"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Attempt{}, fmt.Errorf("element %s: %v", raw, err)
	}
	c := e.Elem.Val.Concat
	if len(c) != 3 || e.Elem.Counter == nil {
		return Attempt{}, fmt.Errorf("element %s: not an address, protocol and port with a counter", raw)
	}
	var addr string
	if err := json.Unmarshal(c[0], &addr); err != nil {
		return Attempt{}, fmt.Errorf("element %s: address: %v", raw, err)
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return Attempt{}, fmt.Errorf("element %s: %v", raw, err)
	}
	proto, err := protoName(c[1])
	if err != nil {
		return Attempt{}, fmt.Errorf("element %s: %v", raw, err)
	}
	port, err := strconv.ParseUint(string(c[2]), 10, 16)
	if err != nil {
		return Attempt{}, fmt.Errorf("element %s: port: %v", raw, err)
	}
	return Attempt{Dest: netip.AddrPortFrom(ip, uint16(port)), Proto: proto, Count: e.Elem.Counter.Packets}, nil
}

// protoName reads the protocol of an element: nft writes a name ("tcp")
// or, for a protocol it has no name for, a number.
func protoName(raw json.RawMessage) (string, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil && name != "" {
		return name, nil
	}
	n, err := strconv.ParseUint(string(raw), 10, 8)
	if err != nil {
		return "", fmt.Errorf("protocol %s: neither a name nor a number", raw)
	}
	switch n {
	case 6:
		return "tcp", nil
	case 17:
		return "udp", nil
	}
	return strconv.FormatUint(n, 10), nil
}
