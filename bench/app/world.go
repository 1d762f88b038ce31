// Package app measures the GitHub App (`phasegate serve`) checking pull
// requests end to end: real serve processes, started from a phasegate
// binary, against an in-process fake GitHub (internal/ghfake) that counts
// every request by route. BigPR checks one pull request carrying a whole
// generated corpus; Burst sends many small pull requests over several
// repositories to one or more replicas, with or without a shared Redis.
// See bench/app/README.md.
package app

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// The fixture: one App, installed once (an organisation) on every
// repository.
const (
	AppID        = 4242
	AppSlug      = "phasegate"
	Installation = 77
	Owner        = "acme"
)

// Secret is the webhook secret of every serve process.
var Secret = []byte("app-bench-secret")

var (
	keyOnce sync.Once
	keyPEM  []byte
	keyPub  *rsa.PublicKey
	keyErr  error
)

// appKey is the App's key, made once per process.
func appKey() ([]byte, *rsa.PublicKey, error) {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			keyErr = fmt.Errorf("generating the App key: %w", err)
			return
		}
		keyPub = &k.PublicKey
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	})
	return keyPEM, keyPub, keyErr
}

// world is a fake GitHub with the App installed, its request meter, and
// the App's key in a file under dir.
type world struct {
	fake    *ghfake.Server
	meter   *Meter
	keyFile string
}

// wrapMu serialises the use of ghfake's process-wide wrapper.
var wrapMu sync.Mutex

func newWorld(dir string) (*world, error) {
	pemBytes, pub, err := appKey()
	if err != nil {
		return nil, err
	}
	keyFile := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		return nil, fmt.Errorf("writing the App key: %w", err)
	}
	m := newMeter()
	wrapMu.Lock()
	ghfake.SetWrapper(func(_ *ghfake.Server, h http.Handler) http.Handler { return m.wrap(h) })
	f := ghfake.New()
	ghfake.SetWrapper(nil)
	wrapMu.Unlock()
	f.AddApp(AppID, AppSlug, pub)
	f.AddInstallation(AppID, Installation)
	// GitHub allows an installation 5,000 requests an hour (up to 12,500
	// on large organisations, 15,000 on Enterprise Cloud): the benchmark
	// counts what a check costs, it does not hit that wall.
	f.SetRateLimit(1 << 30)
	return &world{fake: f, meter: m, keyFile: keyFile}, nil
}

func (w *world) close() { w.fake.Close() }

// env is the environment of a serve process against the fake (startServe
// adds the address).
func (w *world) env() []string {
	return []string{
		"PHASEGATE_APP_ID=" + strconv.Itoa(AppID),
		"PHASEGATE_PRIVATE_KEY_FILE=" + w.keyFile,
		"PHASEGATE_WEBHOOK_SECRET=" + string(Secret),
		"PHASEGATE_GITHUB_API_URL=" + w.fake.URL(),
		"PHASEGATE_RECONCILE_EVERY=0",
	}
}
