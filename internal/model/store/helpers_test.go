package store

import (
	"context"
	"fmt"
)

// Functions only this package's tests use.

// Check runs SQLite's integrity check.
func (s *DB) Check(ctx context.Context) error {
	var res string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("results database %s is damaged: %s", s.path, res)
	}
	return nil
}
