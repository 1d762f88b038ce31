// Command peer is the peer of bench/cmd/ackcompare: a webhook receiver built
// on palantir/go-githubapp v0.30.0 (vendored in _third_party) whose handler
// does nothing, so that what a delivery costs is go-githubapp's own
// acknowledgement — read the body, verify the HMAC-SHA256 signature, dispatch
// by event type, answer. It is its own module, so the product module never
// depends on go-githubapp.
//
// It listens on a loopback address, prints its webhook URL on the first line
// of its standard output and serves until its standard input is closed (the
// parent died or is done) or it gets SIGINT / SIGTERM.
//
//	go build -o /tmp/peer . && /tmp/peer -addr 127.0.0.1:0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
)

// nop handles issue_comment (and pull_request) deliveries by doing nothing.
type nop struct{}

func (nop) Handles() []string { return []string{"issue_comment", "pull_request"} }

func (nop) Handle(context.Context, string, string, []byte) error { return nil }

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	secret := flag.String("secret", "It's a Secret to Everybody", "webhook secret (bench/serve.Secret)")
	path := flag.String("path", "/webhook", "webhook route")
	async := flag.Int("async", 0, "if > 0, go-githubapp's QueueAsyncScheduler with this many workers (queue 1024) instead of the default synchronous one")
	flag.Parse()
	if err := run(*addr, *secret, *path, *async); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

func run(addr, secret, path string, async int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		ln.Close()
		return fmt.Errorf("%s is not a loopback address", ln.Addr())
	}
	var opts []githubapp.DispatcherOption
	if async > 0 {
		opts = append(opts, githubapp.WithScheduler(githubapp.QueueAsyncScheduler(1024, async)))
	}
	mux := http.NewServeMux()
	mux.Handle(path, githubapp.NewEventDispatcher([]githubapp.EventHandler{nop{}}, secret, opts...))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // the parent closes our stdin (or dies): stop
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("http://%s%s\n", ln.Addr(), path)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
