package phpbuild

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// complete copies the binaries into a root-owned stage, writes the record
// and renames the stage into place.
func (b *builder) complete() (*Record, error) {
	b.rec.Created = time.Now().UTC().Format(time.RFC3339)
	b.rec.Older = OlderThan(b.rec.SourceVersion, b.installed)
	stage := filepath.Join(Dir(), ".stage-"+b.rec.ID)
	_ = os.RemoveAll(stage)
	if err := os.Mkdir(stage, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(stage, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return nil, err
	}
	for _, c := range [][2]string{{"sapi/fpm/php-fpm", "php-fpm"}, {"sapi/cli/php", "php"}, {"sapi/cgi/php-cgi", "php-cgi"}, {"modules/opcache.so", "opcache.so"}} {
		if err := b.copyBinary(c[0], filepath.Join(bin, c[1])); err != nil {
			return nil, err
		}
	}
	if len(b.rec.Built) > 0 {
		ext := filepath.Join(stage, "ext")
		if err := os.Mkdir(ext, 0o755); err != nil {
			return nil, err
		}
		for _, name := range b.rec.Built {
			if err := b.copyBinary(filepath.Join("modules", name+".so"), filepath.Join(ext, name+".so")); err != nil {
				return nil, err
			}
		}
	}
	if err := os.Rename(b.logs, filepath.Join(stage, "logs")); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(&b.rec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, "record.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	final := filepath.Join(Dir(), b.rec.ID)
	if _, err := os.Lstat(final); err == nil {
		// --rebuild of an existing key: the old one goes first.
		if err := os.Rename(final, filepath.Join(Dir(), ".work", "old-"+b.rec.ID+"-"+randHex(4))); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(stage, final); err != nil {
		return nil, err
	}
	_ = os.RemoveAll(b.work)
	b.work = ""
	r := b.rec
	return &r, nil
}

// copyBinary copies the binary the build account made at rel under the
// build's tree into a root-owned 0755 file, walking the tree from its
// root-made work directory without following a link at any level and
// refusing anything but a regular file (openTreeFile).
func (b *builder) copyBinary(rel, to string) error {
	from, err := filepath.Rel(b.work, filepath.Join(b.src, rel))
	if err != nil || b.work == "" {
		return fmt.Errorf("the build tree %s is not inside its work directory %s", b.src, b.work)
	}
	in, err := openTreeFile(b.work, from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, 1<<30)); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(0o755); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
