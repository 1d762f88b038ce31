package check

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sync"
)

// HashIDs gives an FS without object ids (a checkout on disk) the ids git
// would give its entries, computed when first asked and remembered for
// the FS's life: a file's is its git blob id (read whole), a symlink's
// that of its target, a directory's a digest of its listing (names and
// kinds: what a ReadDir shows). A run with Options.Cache over it reuses
// the results of units whose files have the same content. known gives the
// blob ids of regular files git already hashed (Options.Known): they are
// taken as they are, without reading the file.
func HashIDs(fsys fs.FS, known map[string]string) IDFS { return &hashIDs{FS: fsys, known: known} }

type hashIDs struct {
	fs.FS
	known map[string]string
	ids   sync.Map // op+name → id
}

func (h *hashIDs) ObjectID(name string, follow bool) (string, error) {
	if id, ok := h.known[name]; ok {
		return "blob " + id, nil
	}
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
	var data []byte
	kind := "blob "
	switch {
	case info.IsDir():
		kind = "tree "
		var entries []fs.DirEntry
		entries, err = fs.ReadDir(h.FS, name)
		for _, e := range entries { // what a ReadDir shows: names and kinds
			data = fmt.Appendf(data, "%q %v\n", e.Name(), e.Type())
		}
	case info.Mode()&fs.ModeSymlink != 0:
		kind = "link "
		var target string
		target, err = fs.ReadLink(h.FS, name)
		data = []byte(target)
	default:
		data, err = fs.ReadFile(h.FS, name)
	}
	if err != nil {
		return "", err
	}
	id := kind + BlobID(data)
	h.ids.Store(key, id)
	return id, nil
}

// BlobID is the git blob id of data: the SHA-1 of "blob <len>\x00" and
// data, as `git hash-object` computes it.
func BlobID(data []byte) string {
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
