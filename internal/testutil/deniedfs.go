package testutil

import "io/fs"

// DeniedFS refuses, with a permission error, to list the directories and
// open the files named in Denied, as for any user (a chmod 000 does not
// stop root, so tests that chmod are skipped as root; this one runs
// everywhere). Stat is passed through: as on the OS, what cannot be read can
// still be stat'ed in a directory that can be listed.
type DeniedFS struct {
	FS     fs.FS
	Denied map[string]bool
}

// Open opens name, or refuses it.
func (d DeniedFS) Open(name string) (fs.File, error) {
	if d.Denied[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.FS.Open(name)
}

// ReadDir lists name, or refuses it.
func (d DeniedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if d.Denied[name] {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	return fs.ReadDir(d.FS, name)
}

// Stat stats name, whatever Denied says.
func (d DeniedFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(d.FS, name) }
