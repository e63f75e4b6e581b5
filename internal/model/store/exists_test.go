package store

import (
	"context"
	"path/filepath"
	"testing"
)

func TestExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	if Exists(path) {
		t.Fatal("Exists before the database was made")
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if !Exists(path) {
		t.Fatal("!Exists after Open made it")
	}
}
