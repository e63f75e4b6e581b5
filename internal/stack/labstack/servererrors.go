package labstack

import (
	"io"
	"sync"

	"github.com/phptune/phptune/internal/model/results"
	"github.com/phptune/phptune/internal/stack/lab"
	"github.com/phptune/phptune/internal/watch/errlog"
	"github.com/phptune/phptune/internal/watch/sysctl"
)

// ErrorLogs follows a lab's own error logs (nginx's, Apache's, php-fpm's)
// across one load run, so that the run's errors come with the servers'
// reasons:
//
//	el := labstack.NewErrorLogs(l)  // marks where the logs end now
//	opt.OnMeasure = el.Mark         // and again when the warm-up ends
//	b, err := load.Run(ctx, opt)
//	el.Attach(b)                    // b.ServerErrors: what was appended since
type ErrorLogs struct {
	lab  *lab.Lab
	mu   sync.Mutex
	mark lab.LogMark
}

// NewErrorLogs marks where the lab's error logs end now: without a warm-up
// the measured part starts here.
func NewErrorLogs(l *lab.Lab) *ErrorLogs {
	return &ErrorLogs{lab: l, mark: l.MarkErrorLogs()}
}

// Mark marks the logs' ends again: load.Options.OnMeasure calls it when
// the warm-up ends, so that the warm-up's lines are left out.
func (e *ErrorLogs) Mark() {
	m := e.lab.MarkErrorLogs()
	e.mu.Lock()
	e.mark = m
	e.mu.Unlock()
}

// Attach reads what the logs gained since the last mark, classifies it
// and sets b.ServerErrors, explained against b's status codes and error
// classes with the lab's knob values, with PHP's own messages counted by
// class and by file under the lab's document root.
func (e *ErrorLogs) Attach(b *results.Bench) {
	if b == nil {
		return
	}
	e.mu.Lock()
	m := e.mark
	e.mu.Unlock()
	sc := errlog.NewScanner()
	sc.SetDocRoot(e.lab.DocRoot)
	var logs []errlog.LogRead
	for _, a := range e.lab.ReadErrorLogs(m, 0, func(name string, r io.Reader) error {
		_, err := sc.Read(errlog.Source(name), r)
		return err
	}) {
		logs = append(logs, errlog.LogRead{Source: errlog.Source(a.Name), Bytes: a.Bytes, Note: a.Note})
	}
	b.ServerErrors = errlog.Result(sc, logs, b, errlog.Settings{Knobs: e.lab.Config, Somaxconn: somaxconn()})
}

// somaxconn is the kernel's cap on listen backlogs (labs share the host's
// network namespace); 0 when it cannot be read.
func somaxconn() int {
	return int(max(sysctl.HostSomaxconn(), 0))
}
