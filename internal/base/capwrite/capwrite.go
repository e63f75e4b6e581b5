// Package capwrite bounds what a child process's output may cost: a
// writer that keeps the first N bytes and drops the rest, never failing
// the writer (a child that writes on is not stopped by an error).
package capwrite

import "io"

// Writer passes the first N bytes written to W and drops the rest; every
// Write reports the whole of p written.
type Writer struct {
	W io.Writer
	N int
}

// Write implements io.Writer.
func (c *Writer) Write(p []byte) (int, error) {
	if c.N > 0 {
		k := min(len(p), c.N)
		c.W.Write(p[:k])
		c.N -= k
	}
	return len(p), nil
}
