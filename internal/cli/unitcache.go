package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/phasegate/phasegate/internal/check"
)

// unitFile is --cache: the units' results of an earlier run, read from
// a file, and those this run used or made, written back after it (so
// the file holds what the tree needs now, not every result it ever
// held). A file that does not decode is an empty cache: a cache never
// decides a finding, it only spares a unit whose files did not change.
type unitFile struct {
	path string
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

func openUnitFile(path string) (*unitFile, error) {
	c := &unitFile{path: path, old: map[string]*check.Unit{}, now: map[string]*check.Unit{}}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("reading the cache %s: %w", path, err)
	case info.Size() > maxUnitFile:
		return c, nil // too large to be ours: start afresh
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cache %s: %w", path, err)
	}
	var f unitFileJSON
	if json.Unmarshal(data, &f) == nil && f.Format == unitFileFormat && f.Units != nil {
		c.old = f.Units
	}
	return c, nil
}

func (c *unitFile) Get(key [32]byte) (*check.Unit, bool) {
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

func (c *unitFile) Add(key [32]byte, u *check.Unit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now[hex.EncodeToString(key[:])] = u
}

// save writes the results this run used or made, replacing the file
// whole (a new file renamed over it).
func (c *unitFile) save() error {
	c.mu.Lock()
	data, err := json.Marshal(unitFileJSON{Format: unitFileFormat, Units: c.now})
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("writing the cache %s: %w", c.path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), ".phasegate-cache-*")
	if err != nil {
		return fmt.Errorf("writing the cache %s: %w", c.path, err)
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing the cache %s: %w", c.path, err)
	}
	return nil
}

// cacheScope names the running program for the cache's keys: its version
// and the digest of its executable, so that no result of another build —
// a development build keeps its version — is ever reused.
func cacheScope() (string, error) {
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
	return Version() + " " + hex.EncodeToString(h.Sum(nil)), nil
}
