package unit

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNotStatus is wrapped when a document is not Unit's /status.
var ErrNotStatus = errors.New("not a Unit /status document")

// Status is what Unit's /status says (Unit 1.28 and later): connection
// and request counters and, per application, its processes and the
// requests it is running.
type Status struct {
	Connections struct {
		Accepted int64 `json:"accepted"`
		Active   int64 `json:"active"`
		Idle     int64 `json:"idle"`
		Closed   int64 `json:"closed"`
	} `json:"connections"`
	Requests struct {
		Total int64 `json:"total"`
	} `json:"requests"`
	Applications map[string]AppStatus `json:"applications"`
}

// AppStatus is one application's part of /status.
type AppStatus struct {
	Processes struct {
		Running  int64 `json:"running"`
		Starting int64 `json:"starting"`
		Idle     int64 `json:"idle"`
	} `json:"processes"`
	Requests struct {
		Active int64 `json:"active"`
	} `json:"requests"`
}

// ParseStatus parses a /status document. Counters must be present and not
// negative: a document without "connections" and "requests" is not one.
func ParseStatus(b []byte) (*Status, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStatus, err)
	}
	if raw["connections"] == nil || raw["requests"] == nil {
		return nil, fmt.Errorf("%w: no connections or requests", ErrNotStatus)
	}
	var s Status
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotStatus, err)
	}
	c := s.Connections
	vals := []int64{c.Accepted, c.Active, c.Idle, c.Closed, s.Requests.Total}
	for name, a := range s.Applications {
		p := a.Processes
		vals = append(vals, p.Running, p.Starting, p.Idle, a.Requests.Active)
		if p.Idle > p.Running {
			return nil, fmt.Errorf("%w: application %q has %d idle of %d running processes", ErrNotStatus, name, p.Idle, p.Running)
		}
	}
	for _, v := range vals {
		if v < 0 {
			return nil, fmt.Errorf("%w: a negative counter", ErrNotStatus)
		}
	}
	return &s, nil
}
