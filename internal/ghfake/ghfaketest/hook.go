package ghfaketest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// The violations of each fake, until Verify claims them or Main reports
// them.
var (
	mu        sync.Mutex
	enabled   *Validator
	pending   = map[*ghfake.Server][]string{}
	unclaimed []string // of fakes no Verify watches, or after their test ended
	watched   = map[*ghfake.Server]bool{}
	seen      = map[string]int{} // operation → exchanges checked
)

// Main runs a package's tests with every fake that ghfake.New starts
// checked against the subset (Load), and returns the exit code: m.Run's,
// or 1 when the subset cannot be loaded or a violation no Verify claimed
// happened (each is written to w).
func Main(m *testing.M, w io.Writer) int {
	v, err := Load()
	if err != nil {
		fmt.Fprintln(w, "ghfaketest:", err)
		return 1
	}
	return Run(m, v, w)
}

// gcPercent is the GOGC of the test binaries that Run: their tests push
// hundreds of megabytes of short-lived JSON through the fake, the
// validator and the client, and under -race every collection costs several
// times what it costs without; at 400 they collect a quarter as often, for
// 10–16 % less CPU (decide, action) and a peak of about 300 MB instead of
// 150. A GOGC in the environment is left as it is.
const gcPercent = 400

// Run is Main with a validator of the caller's.
func Run(m *testing.M, v *Validator, w io.Writer) int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	Enable(v)
	defer ghfake.SetWrapper(nil)
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	left := append([]string(nil), unclaimed...)
	for _, list := range pending {
		left = append(left, list...)
	}
	if len(left) > 0 {
		sort.Strings(left)
		fmt.Fprintf(w, "ghfaketest: %d exchanges with the fake GitHub break GitHub's OpenAPI description (%s):\n", len(left), SubsetFile)
		for _, l := range left {
			fmt.Fprintln(w, "  "+l)
		}
		return 1
	}
	return code
}

// Enable makes every fake ghfake.New starts from now on checked by v.
func Enable(v *Validator) {
	mu.Lock()
	enabled = v
	mu.Unlock()
	ghfake.SetWrapper(func(s *ghfake.Server, next http.Handler) http.Handler { return v.Wrap(s, next) })
}

// Verify makes the violations of f fail t when t ends (t.Cleanup). It does
// nothing when the package's tests did not Enable a validator.
func Verify(t testing.TB, f *ghfake.Server) {
	t.Helper()
	mu.Lock()
	on := enabled != nil
	if on {
		watched[f] = true
	}
	mu.Unlock()
	if !on {
		return
	}
	t.Cleanup(func() {
		mu.Lock()
		list := pending[f]
		delete(pending, f)
		delete(watched, f)
		mu.Unlock()
		for i, l := range list {
			if i == 20 {
				t.Errorf("ghfaketest: … and %d more", len(list)-i)
				break
			}
			t.Errorf("ghfaketest: the fake GitHub broke GitHub's OpenAPI description: %s", l)
		}
	})
}

// Seen is how many exchanges of each operation were checked so far.
func Seen() map[string]int {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]int, len(seen))
	for k, n := range seen {
		out[k] = n
	}
	return out
}

// Wrap is next (s's handler) with every exchange checked before its answer
// is sent: the answer is buffered, checked, then written, so a violation
// is recorded before the client sees the answer.
func (v *Validator) Wrap(s *ghfake.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readAll(r.Body, r.ContentLength)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{header: http.Header{}}
		next.ServeHTTP(rec, r)
		if rec.status == 0 && len(rec.body) == 0 {
			return // the client went away before an answer
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		op, violations := v.Check(Exchange{Request: r, RequestBody: body, Status: rec.status, Header: rec.header, Body: rec.body})
		record(s, op, violations)
		for k, vs := range rec.header {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body)
	})
}

func record(s *ghfake.Server, op string, violations []string) {
	mu.Lock()
	defer mu.Unlock()
	if op != "" {
		seen[op]++
	}
	if len(violations) == 0 {
		return
	}
	if watched[s] {
		pending[s] = append(pending[s], violations...)
		return
	}
	unclaimed = append(unclaimed, violations...)
}

// recorder buffers an answer.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
		if n, err := strconv.Atoi(r.header.Get("Content-Length")); err == nil && n > 0 && n <= maxPresize && r.body == nil {
			// one buffer of the right size, not one per doubling; made,
			// not grown (bytes.Buffer.Grow copies a zeroed slice in,
			// which the race detector watches byte by byte)
			r.body = make([]byte, 0, n)
		}
	}
}

// maxPresize is the most a length announced ahead makes the hook allocate.
const maxPresize = 64 << 20

// readAll is io.ReadAll into one buffer when the length is known ahead.
func readAll(r io.Reader, length int64) ([]byte, error) {
	if length < 0 || length > maxPresize {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, length+bytes.MinRead))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
