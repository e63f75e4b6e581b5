package stacksession

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/stack/lab/labtest"
	"github.com/phptune/phptune/internal/stack/labstack"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// TestOpenUndoesOnError: a session that fails to open has given back
// what it took (here the raised kernel settings), and nothing is left to
// close.
func TestOpenUndoesOnError(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	cases := []struct {
		name      string
		o         Options
		raised    bool
		restored  bool
		wantError bool
	}{
		{"raise refused", Options{Command: "test", Own: lab.Options{App: "hello"}}, false, false, true},
		{"lab refused after the raise", Options{Command: "test", Own: lab.Options{App: "no-such-app"}}, true, true, true},
		{"no such running lab", Options{Command: "test", Lab: "no-such-lab"}, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raised, restored := false, false
			c.o.Raise = func() (func(), error) {
				if c.name == "raise refused" {
					return nil, errors.New("refused")
				}
				raised = true
				return func() { restored = true }, nil
			}
			s, err := Open(context.Background(), c.o)
			if (err != nil) != c.wantError {
				t.Fatalf("err %v, want error %v", err, c.wantError)
			}
			if s != nil {
				t.Errorf("a failed Open returned a session")
			}
			if raised != c.raised || restored != c.restored {
				t.Errorf("raised %v restored %v, want %v %v", raised, restored, c.raised, c.restored)
			}
		})
	}
}

// TestCloseRunsLastFirst: Close undoes in the reverse order of Open (a
// lab of its own goes down before the kernel's settings are restored; a
// running lab's configuration comes back after them).
func TestCloseRunsLastFirst(t *testing.T) {
	var order []int
	s := &Session{}
	s.defer_(func() { order = append(order, 1) })
	s.defer_(func() { order = append(order, 2) })
	s.Close()
	s.Close() // twice is harmless
	if len(order) != 2 || order[0] != 2 || order[1] != 1 {
		t.Errorf("order %v, want [2 1]", order)
	}
	var nilSession *Session
	nilSession.Close()
}

// TestRaiseOnStackRestoresAtClose: settings raised on an open session
// (here the zero Session, a target of the command's own) are restored at
// Close, after what was opened later and before what was opened earlier;
// a refused raise leaves nothing to restore.
func TestRaiseOnStackRestoresAtClose(t *testing.T) {
	var order []string
	s := &Session{}
	s.defer_(func() { order = append(order, "lab down") })
	if _, err := s.RaiseOnStack(context.Background(), func(l *lab.Lab) (*sysctl.Run, func(), error) {
		if l != nil {
			t.Errorf("the zero session gave a lab")
		}
		return nil, nil, errors.New("refused")
	}, nil); err == nil {
		t.Fatal("a refused raise gave no error")
	}
	run := &sysctl.Run{}
	got, err := s.RaiseOnStack(context.Background(), func(*lab.Lab) (*sysctl.Run, func(), error) {
		return run, func() { order = append(order, "restored") }, nil
	}, nil)
	if err != nil || got != run {
		t.Fatalf("raise: %v, %v", got, err)
	}
	s.Close()
	if len(order) != 2 || order[0] != "restored" || order[1] != "lab down" {
		t.Errorf("order %v, want [restored, lab down]", order)
	}
}

// TestOpenNamesTheLabItCannotOpen: a running lab that cannot be opened is
// a LabError, for the command to say which flag named it.
func TestOpenNamesTheLabItCannotOpen(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	_, err := Open(context.Background(), Options{Command: "test", Lab: "no-such-lab"})
	var le *LabError
	if !errors.As(err, &le) || le.Lab != "no-such-lab" || !strings.HasPrefix(err.Error(), "lab no-such-lab: ") {
		t.Errorf("err %v, want a LabError for no-such-lab", err)
	}
}

// TestOpenUndoesAfterAGeneratorRefuses: a generator refused once the lab
// is open undoes the session as any other failure does.
func TestOpenUndoesAfterAGeneratorRefuses(t *testing.T) {
	t.Setenv("PHPTUNE_HOME", t.TempDir())
	restored, asked := false, false
	o := Options{Command: "test", Lab: "no-such-lab",
		Generator: func(*labstack.Stack) (labstack.Generator, error) { asked = true; return nil, errors.New("refused") }}
	if s, err := Open(context.Background(), o); err == nil || s != nil {
		t.Fatalf("Open: %v, %v", s, err)
	}
	if asked {
		t.Errorf("the generator was asked for without a lab")
	}
	s := &Session{}
	s.defer_(func() { restored = true })
	if st := s.Stack(); st != s.Stack() {
		t.Errorf("Stack is not the same stack twice")
	}
	s.Close()
	if !restored {
		t.Errorf("Close did not undo")
	}
}

// TestOpenKeepLeavesTheLabUp: with Keep (phptune lab up) the lab of its
// own outlives Close, owned by no command; a Keep session that fails after
// the lab came up (here its workload) takes the lab down all the same.
func TestOpenKeepLeavesTheLabUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	labtest.Home(t)
	ctx := context.Background()
	s, err := Open(ctx, Options{Command: "lab up", Own: lab.Options{Name: "kept", App: "hello"}, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	defer lab.Down("kept")
	l, err := lab.Open("kept")
	if err != nil {
		t.Fatalf("the kept lab is gone after Close: %v", err)
	}
	if l.OwnedBy != "" || s.Own {
		t.Errorf("kept lab owned by %q (session Own %v), want no owner", l.OwnedBy, s.Own)
	}
	_, err = Open(ctx, Options{Command: "lab up", Own: lab.Options{Name: "failed", App: "hello"}, Keep: true, Workload: "no-such-workload"})
	if err == nil {
		t.Fatal("a workload that does not exist was accepted")
	}
	if _, oerr := lab.Open("failed"); oerr == nil {
		lab.Down("failed")
		t.Errorf("the lab of a failed Keep session is still up (Open failed with: %v)", err)
	}
}
