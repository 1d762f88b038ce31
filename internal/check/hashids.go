package check

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"sync"
)

// HashIDs gives an FS without object ids (a checkout on disk) the ids git
// would give its entries, computed when first asked and remembered for
// the FS's life: a file's is its git blob id (read whole), a symlink's
// that of its target, a directory's a digest of its listing (names and
// kinds: what a ReadDir shows). A run with Options.Cache over it reuses
// the results of units whose files have the same content.
func HashIDs(fsys fs.FS) IDFS { return &hashIDs{FS: fsys} }

type hashIDs struct {
	fs.FS
	ids sync.Map // op+name → id
}

func (h *hashIDs) ObjectID(name string, follow bool) (string, error) {
	key := fmt.Sprint(follow, "\x00", name)
	if id, ok := h.ids.Load(key); ok {
		return id.(string), nil
	}
	stat := fs.Stat
	if !follow {
		stat = fs.Lstat
	}
	info, err := stat(h.FS, name)
	if err != nil {
		return "", err
	}
	var id string
	switch {
	case info.IsDir():
		id, err = h.listingID(name)
	case info.Mode()&fs.ModeSymlink != 0:
		var target string
		if target, err = fs.ReadLink(h.FS, name); err == nil {
			id = "link " + blobID([]byte(target))
		}
	default:
		id, err = h.fileID(name)
	}
	if err != nil {
		return "", err
	}
	h.ids.Store(key, id)
	return id, nil
}

func (h *hashIDs) fileID(name string) (string, error) {
	f, err := h.FS.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	sum := sha1.New()
	fmt.Fprintf(sum, "blob %d\x00", info.Size())
	n, err := io.Copy(sum, f)
	if err != nil {
		return "", err
	}
	if n != info.Size() {
		return "", fmt.Errorf("%s changed while it was read", name)
	}
	return "blob " + hex.EncodeToString(sum.Sum(nil)), nil
}

func (h *hashIDs) listingID(name string) (string, error) {
	entries, err := fs.ReadDir(h.FS, name)
	if err != nil {
		return "", err
	}
	sum := sha1.New()
	for _, e := range entries {
		fmt.Fprintf(sum, "%q %v\n", e.Name(), e.Type())
	}
	return "tree " + hex.EncodeToString(sum.Sum(nil)), nil
}

// blobID is the git blob id of data.
func blobID(data []byte) string {
	sum := sha1.New()
	fmt.Fprintf(sum, "blob %d\x00", len(data))
	sum.Write(data)
	return hex.EncodeToString(sum.Sum(nil))
}

// The FS's own operations, as the FS has them (discovery reads links).

func (h *hashIDs) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(h.FS, name) }
func (h *hashIDs) Stat(name string) (fs.FileInfo, error)      { return fs.Stat(h.FS, name) }
func (h *hashIDs) ReadLink(name string) (string, error)       { return fs.ReadLink(h.FS, name) }
func (h *hashIDs) Lstat(name string) (fs.FileInfo, error)     { return fs.Lstat(h.FS, name) }
