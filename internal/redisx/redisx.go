// Package redisx shares what `phasegate serve` must not do twice across its
// replicas (docs/security.md): per-issue locks and the set of recently seen
// webhook delivery IDs, in one Redis (`--redis-url`); and what they share
// out: the durable job queue (queue.go, on asynq) and per-key semaphores
// (semaphore.go) that bound one installation's running jobs.
//
// Redis is never on the correctness path of the ledger: the issue thread is
// the database, and every step of the decision handler is idempotent.
// Redis only stops two replicas from racing. Its failure contract follows:
//
//   - Every Redis error (refused, timed out, closed, script error) is
//     returned wrapping [ErrUnavailable], quickly: the client does not retry
//     on its own and its dial, read and write timeouts are short.
//   - A caller that gets ErrUnavailable from [Locker.Lock] or
//     [Seen.SeenBefore] must NOT act on the event. It still answers the
//     webhook, and leaves the work to the reconcile loop, which re-folds
//     every pending issue once Redis (and therefore the lock) is back. Acting
//     without the lock is how a command would be answered twice.
//   - When ctx ends first, the error is ctx's (context.Canceled or
//     context.DeadlineExceeded), not ErrUnavailable.
//
// Without Redis, `serve` runs as one replica with decide.MemLocker.
//
// The lock is the single-instance pattern from the Redis documentation: SET
// key token NX PX lease to take it, a compare-and-delete script to release
// it, a compare-and-PEXPIRE script to renew it while held. It is not
// Redlock: with an asynchronously replicated Redis, a failover can lose a
// held lock. That, a replica stalled beyond its lease, and a Redis outage
// during handling are covered by the handler's idempotence, not by the
// lock.
package redisx

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// ErrUnavailable is wrapped by every error caused by Redis failing (not
// answering, refusing, timing out, or the Store being closed). The caller
// must not act on the event it was guarding: see the package doc.
var ErrUnavailable = errors.New("redis unavailable")

// Timeouts applied unless the URL sets them (go-redis query parameters such
// as ?dial_timeout=3s&read_timeout=2s). They are short so that a dead Redis
// fails fast and the webhook is still answered within GitHub's 10 s.
const (
	DefaultDialTimeout  = 1 * time.Second
	DefaultReadTimeout  = 1 * time.Second
	DefaultWriteTimeout = 1 * time.Second
)

// Store is a connection pool to one Redis. It is safe for concurrent use.
type Store struct {
	rdb *redis.Client
}

// Open connects to the Redis at url (redis://[user:password@]host:port/db,
// rediss:// for TLS, or unix://) and pings it. A malformed URL is an error;
// a Redis that does not answer is an error wrapping ErrUnavailable.
//
// The client does not retry a failed command itself (unless the URL sets
// max_retries): the Locker and Seen decide what a failure means, and a
// blind retry of SET NX whose reply was lost would report the caller's own
// write as someone else's.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parsing the redis url: %w", redactURLError(err))
	}
	q := url.Values{}
	if u, err := url.Parse(rawURL); err == nil {
		q = u.Query()
	}
	opt.DialTimeout = cmp.Or(opt.DialTimeout, DefaultDialTimeout)
	opt.ReadTimeout = cmp.Or(opt.ReadTimeout, DefaultReadTimeout)
	opt.WriteTimeout = cmp.Or(opt.WriteTimeout, DefaultWriteTimeout)
	if !q.Has("max_retries") {
		opt.MaxRetries = -1
	}
	opt.PoolTimeout = cmp.Or(opt.PoolTimeout, opt.ReadTimeout+time.Second)
	// One dial attempt per command: a refused connection is reported at once.
	opt.DialerRetries = 1
	// Let ctx deadlines bound socket operations too.
	opt.ContextTimeoutEnabled = true
	// A plain self-hosted Redis: no cluster maintenance push notifications.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}

	s := &Store{rdb: redis.NewClient(opt)}
	if err := s.Ping(ctx); err != nil {
		_ = s.rdb.Close()
		return nil, err
	}
	return s, nil
}

// LogTo sends go-redis's own log lines (a connection it failed to close, a
// duration it truncated) to logger as warnings, instead of go-redis's
// plain-text logger on stderr, which would break a JSON log. go-redis has
// one logger per process: the last call wins.
func LogTo(logger *slog.Logger) { redis.SetLogger(slogPrinter{logger}) }

// slogPrinter is go-redis's Logging interface over a slog.Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	p.l.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// keyspace is the Redis keys prefix+key of one use of a Store, each kept
// for ttl (a Locker's or a Semaphore's lease).
type keyspace struct {
	rdb    *redis.Client
	prefix string
	ttl    time.Duration
}

// redactURLError keeps a password in the URL out of the error text: a
// *url.Error quotes the whole URL, so only its cause is kept.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Ping checks that Redis answers, for /readyz. Its error wraps
// ErrUnavailable unless ctx ended first.
func (s *Store) Ping(ctx context.Context) error {
	return unavailable(ctx, "pinging redis", s.rdb.Ping(ctx).Err())
}

// Close closes the pool. Held leases stop being renewed (they expire in
// Redis after their lease); later calls fail with ErrUnavailable.
func (s *Store) Close() error {
	if err := s.rdb.Close(); err != nil {
		return fmt.Errorf("closing redis: %w", err)
	}
	return nil
}

// unavailable turns a Redis error into ctx's error when ctx has ended (the
// caller gave up; Redis may be fine) and into ErrUnavailable otherwise;
// no error stays nil.
func unavailable(ctx context.Context, what string, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	// The socket deadline is ctx's deadline (ContextTimeoutEnabled) and can
	// fire a moment before ctx's own timer does.
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return fmt.Errorf("%s: %w", what, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w: %w", what, ErrUnavailable, err)
}
