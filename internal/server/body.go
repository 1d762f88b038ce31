package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Reading a delivery's body. Its bytes are charged to the in-flight
// budget as they arrive, in a buffer that grows (doubling from
// bodyChunk) up to its declared length (MaxBody when it declares none):
// a sender that declares 25 MiB and sends one byte holds one chunk, not 25
// MiB. And a sender must keep up bodyMinRate after its first bodyGrace
// (GitHub sends at LAN speed), else it is cut; none takes longer than
// bodyReadTimeout.

const (
	// bodyReadTimeout bounds the reading of a delivery's body: GitHub
	// gives up on a delivery after 10 seconds.
	bodyReadTimeout = 10 * time.Second
	// bodyMinRate is the slowest a body may arrive after bodyGrace, in
	// bytes a second.
	bodyMinRate = 64 << 10
	bodyGrace   = time.Second
	// bodyChunk is the first reservation of a body longer than it.
	bodyChunk = 64 << 10
)

var (
	errOverBudget = errors.New("the in-flight body budget is spent")
	errTooSlow    = errors.New("the body arrives too slowly")
)

// readBody reads r's body, charging *reserved bytes of the budget (the
// caller releases them once done with the body). A body of known length
// ends in a buffer of its exact size.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, reserved *int64) ([]byte, error) {
	limit := s.cfg.MaxBody
	if r.ContentLength >= 0 {
		limit = min(r.ContentLength, limit)
	}
	rd := &bodyReader{s: s, rc: http.NewResponseController(w), body: http.MaxBytesReader(w, r.Body, s.cfg.MaxBody),
		limit: limit, reserved: reserved, start: time.Now()}
	rd.end = rd.start.Add(s.cfg.bodyReadTimeout)
	return rd.read()
}

type bodyReader struct {
	s        *Server
	rc       *http.ResponseController
	body     io.Reader
	limit    int64
	reserved *int64
	start    time.Time
	end      time.Time // the last deadline
	buf      []byte
}

func (rd *bodyReader) read() ([]byte, error) {
	for {
		if len(rd.buf) == cap(rd.buf) {
			if int64(len(rd.buf)) == rd.limit {
				err := rd.atEnd()
				_ = rd.rc.SetReadDeadline(rd.end)
				return rd.buf, err
			}
			if err := rd.grow(); err != nil {
				return nil, err
			}
		}
		slow := rd.deadline()
		n, err := rd.body.Read(rd.buf[len(rd.buf):cap(rd.buf)])
		rd.buf = rd.buf[:len(rd.buf)+n]
		switch {
		case err == io.EOF:
			_ = rd.rc.SetReadDeadline(rd.end) // the rate is met: the handler's work is not held to it
			return rd.buf, nil
		case errors.Is(err, os.ErrDeadlineExceeded) && slow:
			return nil, errTooSlow
		case err != nil:
			return nil, err
		}
	}
}

// grow reserves and allocates the next chunk of the buffer.
func (rd *bodyReader) grow() error {
	next := min(rd.limit, max(2*int64(cap(rd.buf)), bodyChunk))
	more := next - int64(cap(rd.buf))
	if !rd.s.budget.acquire(more) {
		return errOverBudget
	}
	*rd.reserved += more
	b := make([]byte, len(rd.buf), next)
	copy(b, rd.buf)
	rd.buf = b
	return nil
}

// atEnd checks that a buffer full to the limit is the whole body.
func (rd *bodyReader) atEnd() error {
	rd.deadline()
	var one [1]byte
	n, err := rd.body.Read(one[:])
	switch {
	case n > 0:
		return &http.MaxBytesError{Limit: rd.limit}
	case err == io.EOF:
		return nil
	case err == nil:
		return rd.atEnd()
	}
	return err
}

// deadline sets the connection's read deadline to when the bytes received
// so far stop paying for the time taken: bodyGrace plus their time at
// bodyMinRate, at most bodyReadTimeout. It reports whether that deadline
// is the rate's (a sender cut at it is too slow).
func (rd *bodyReader) deadline() bool {
	cfg := &rd.s.cfg
	d := rd.start.Add(cfg.bodyGrace + time.Duration(float64(len(rd.buf))/float64(cfg.bodyMinRate)*float64(time.Second)))
	slow := d.Before(rd.end)
	if !slow {
		d = rd.end
	}
	_ = rd.rc.SetReadDeadline(d)
	return slow
}
