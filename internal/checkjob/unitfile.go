package checkjob

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/check"
)

// UnitFile is a check.Cache in a file (the CLI's --cache, the action's
// cache-file): the units' results of an earlier run, read from the file,
// and those this run used or made, written back by Save (so the file holds
// what the tree needs now, not every result it ever held). A file that
// does not decode is an empty cache: a cache never decides a finding, it
// only spares a unit whose files did not change. The file is read and
// written through an os.Root of its directory, so a symbolic link there
// leads no write out of it.
type UnitFile struct {
	root *os.Root
	name string
	mu   sync.Mutex
	old  map[string]*check.Unit
	now  map[string]*check.Unit
}

// unitFileFormat names the file's shape.
const unitFileFormat = "phasegate-units/1"

// maxUnitFile bounds the file read.
const maxUnitFile = 512 << 20

type unitFileJSON struct {
	Format string                 `json:"format"`
	Units  map[string]*check.Unit `json:"units"`
}

// OpenUnitFile reads the cache at name inside root (absent: empty).
func OpenUnitFile(root *os.Root, name string) (*UnitFile, error) {
	c := &UnitFile{root: root, name: name, old: map[string]*check.Unit{}, now: map[string]*check.Unit{}}
	info, err := root.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("reading the cache %s: %w", name, err)
	case info.Size() > maxUnitFile:
		return c, nil // too large to be ours: start afresh
	}
	data, err := root.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading the cache %s: %w", name, err)
	}
	var f unitFileJSON
	if json.Unmarshal(data, &f) == nil && f.Format == unitFileFormat && f.Units != nil {
		c.old = f.Units
	}
	return c, nil
}

func (c *UnitFile) Get(key [32]byte) (*check.Unit, bool) {
	k := hex.EncodeToString(key[:])
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.now[k]
	if !ok {
		if u, ok = c.old[k]; ok && u != nil {
			c.now[k] = u
		}
	}
	return u, ok && u != nil
}

func (c *UnitFile) Add(key [32]byte, u *check.Unit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now[hex.EncodeToString(key[:])] = u
}

// Save writes the results this run used or made, replacing the file
// whole (a new file renamed over it).
func (c *UnitFile) Save() error {
	c.mu.Lock()
	data, err := json.Marshal(unitFileJSON{Format: unitFileFormat, Units: c.now})
	c.mu.Unlock()
	if err == nil {
		tmp := c.name + ".phasegate-tmp-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		if err = c.root.WriteFile(tmp, data, 0o644); err == nil {
			if err = c.root.Rename(tmp, c.name); err != nil {
				_ = c.root.Remove(tmp)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("writing the cache %s: %w", c.name, err)
	}
	return nil
}

// ProgramScope names the running program for a cache's keys: its version
// and the digest of its executable, so that no result of another build —
// a development build keeps its version — is ever reused.
func ProgramScope(version string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("naming this program for --cache: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("naming this program for --cache: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("naming this program for --cache: %w", err)
	}
	return version + " " + hex.EncodeToString(h.Sum(nil)), nil
}
