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
func WriteIn(dir, rel string, write func(io.Writer) error) error {
	f, err := Create(dir, rel)
	if err != nil {
		return err
	}
	if err := write(f.W); err != nil {
		f.Discard()
		return f.wrap(err)
	}
	return f.Commit()
}

// File is a file being written the way WriteIn writes one, for a writer
// that cannot hand WriteIn one function (rows written as a run goes): a
// temporary file next to rel, buffered, that Commit syncs and renames to
// rel and Discard removes. Exactly one of the two must end it.
type File struct {
	W io.Writer // buffered: the file's contents go here

	dir, rel, tmp string
	root          *os.Root
	f             *os.File
	bw            *bufio.Writer
}

// Create starts writing the file rel (slash-separated) inside dir,
// creating the folders on the way.
func Create(dir, rel string) (_ *File, err error) {
	f := &File{dir: dir, rel: rel}
	defer func() { err = f.wrap(err) }()
	if f.root, err = os.OpenRoot(dir); err != nil {
		return nil, err
	}
	folder, name := path.Split(rel)
	if folder != "" {
		if err := f.root.MkdirAll(folder, 0o755); err != nil {
			f.root.Close()
			return nil, err
		}
	}
	removeStaleTemps(f.root, folder, name)
	f.tmp = folder + tempName(name, rand.Text()[:tempTagLen])
	if f.f, err = f.root.OpenFile(f.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
		f.root.Close()
		return nil, err
	}
	f.bw = bufio.NewWriterSize(f.f, 1<<16)
	f.W = f.bw
	return f, nil
}

// tempTagLen is the length of the random tag in a temporary file's name.
const tempTagLen = 12

// tempName is the name of a temporary file of name, tagged tag.
func tempName(name, tag string) string { return "." + name + "." + tag + ".tmp" }

// isTempOf reports whether n is the name of a temporary file Create made
// for name: a dot, name, a dot, a tag of tempTagLen characters of
// rand.Text's alphabet (A–Z, 2–7), ".tmp".
func isTempOf(n, name string) bool {
	tag, ok := strings.CutPrefix(n, "."+name+".")
	if tag, ok = strings.CutSuffix(tag, ".tmp"); !ok || len(tag) != tempTagLen {
		return false
	}
	for _, c := range tag {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// removeStaleTemps removes, best effort, the temporary files of name in
// folder (of root) that an earlier command left when it was killed
// mid-write: a killed run leaves its requests.csv as one, as large as the
// rows it had written, and nothing else would ever remove it. Only
// Create's own temporaries of this one file are removed. One of another
// command writing the same file at this moment would be too (its rename
// then fails): two commands writing one file already race for it.
func removeStaleTemps(root *os.Root, folder, name string) {
	d, err := root.Open(path.Clean("./" + folder))
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		if isTempOf(n, name) {
			root.Remove(folder + n)
		}
	}
}

// Commit flushes, syncs and closes the file and moves it to its name.
func (f *File) Commit() error {
	err := f.bw.Flush()
	if err == nil {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.root.Rename(f.tmp, f.rel)
	} else {
		f.root.Remove(f.tmp)
	}
	f.root.Close()
	return f.wrap(err)
}

// Discard closes and removes the temporary file: rel is left as it was.
func (f *File) Discard() {
	f.f.Close()
	f.root.Remove(f.tmp)
	f.root.Close()
}

// wrap names the file in a non-nil err.
func (f *File) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing %s: %w", filepath.Join(f.dir, filepath.FromSlash(f.rel)), err)
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

// CheckFileIn is CheckFile for a command that also creates the folder
// made (its -o DIR; "" none) before it writes file: a file straight in
// made needs made to take it, which CheckDir checks, and must not be a
// folder; made need not exist yet.
func CheckFileIn(flag, file, made string) error {
	if made == "" || !samePath(filepath.Dir(file), made) {
		return CheckFile(flag, file)
	}
	if fi, err := os.Stat(file); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file name", flag, file)
	}
	return nil
}

// samePath reports whether a and b name the same path, once absolute and
// cleaned (not following links).
func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
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
