package outdir

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// WriteIn writes the file rel (slash-separated, inside dir), creating the
// folders on the way: see the package documentation.
func WriteIn(dir, rel string, write func(io.Writer) error) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("writing %s: %w", filepath.Join(dir, filepath.FromSlash(rel)), err)
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	folder, name := path.Split(rel)
	if folder != "" {
		if err := root.MkdirAll(folder, 0o755); err != nil {
			return err
		}
	}
	tmp := folder + "." + name + "." + rand.Text()[:12] + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := writeSynced(f, write); err != nil {
		root.Remove(tmp)
		return err
	}
	return root.Rename(tmp, rel)
}

// writeSynced writes f through a buffer, syncs and closes it, and returns
// the first error.
func writeSynced(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<16)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadIn reads the file rel (slash-separated) inside dir, never through a
// symbolic link out of it.
func ReadIn(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(rel)
}

// RemoveIn removes the file rel inside dir, if it is there.
func RemoveIn(dir, rel string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", filepath.Join(dir, filepath.FromSlash(rel)), err)
	}
	return nil
}

// WriteFile writes a single output file (--trace FILE, calibrate -o
// FILE) through WriteIn in its folder.
func WriteFile(file string, write func(io.Writer) error) error {
	return WriteIn(filepath.Dir(file), filepath.Base(file), write)
}

// Saver returns a writer of files inside dir through WriteIn, in the
// shape of plot.Save.
func Saver(dir string) func(rel string, write func(io.Writer) error) error {
	return func(rel string, write func(io.Writer) error) error { return WriteIn(dir, rel, write) }
}

// WriteIndentedJSON writes v as indented JSON with a trailing newline.
func WriteIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// MakeDir creates an output folder (and its parents) if missing.
func MakeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	return nil
}

// CheckDir reports whether dir, given by flag, can take a command's
// output, without creating it: an existing folder that takes a new file,
// or a missing one whose nearest existing parent is such a folder.
func CheckDir(flag, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s %s: not a directory", flag, dir)
	case err == nil:
		return probeWritable(flag, dir, dir)
	case !missing(err):
		return fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	return checkParent(flag, dir)
}

// CheckFile reports whether file, given by flag, can be written: not a
// folder, in an existing folder that takes a new file.
func CheckFile(flag, file string) error {
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file name", flag, file)
	}
	parent := filepath.Dir(file)
	fi, err := os.Stat(parent)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: no directory %s", flag, file, parent)
	case err != nil:
		return fmt.Errorf("%s %s: %w", flag, file, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %s: %s is not a directory", flag, file, parent)
	}
	return probeWritable(flag, file, parent)
}

// checkParent checks the nearest existing parent of the missing dir: it
// must be a folder that takes a new file.
func checkParent(flag, dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s %s: %s is not a directory", flag, dir, p)
		case err == nil:
			return probeWritable(flag, dir, p)
		case !missing(err):
			return fmt.Errorf("%s %s: %w", flag, dir, err)
		case p == filepath.Dir(p):
			return fmt.Errorf("%s %s: no existing parent directory", flag, dir)
		}
	}
}

// missing reports whether a Stat error says the path does not exist, or
// that a part of it is a file (so it cannot exist).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// probeWritable creates and removes a file in folder, so that a folder
// that cannot take the output fails now, not after the simulation.
func probeWritable(flag, target, folder string) error {
	f, err := os.CreateTemp(folder, ".handoff-probe-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("%s %s: cannot write in %s: %w", flag, target, folder, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// RemoveTemps removes, best effort, the temporary files WriteIn left in
// folder rel of dir when a run was killed mid-write: only clutter, and
// never followed out of dir.
func RemoveTemps(dir, rel string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		if strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp") {
			root.Remove(path.Join(rel, n))
		}
	}
}
