// Package probe is `phasegate serve --probe`: it asks a serve running on
// this host whether it is ready (GET /readyz), for the health check of a
// container image that has no curl. It never talks to GitHub.
package probe

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// Timeout bounds the probe.
const Timeout = 5 * time.Second

// Ready asks the serve listening on addr (its --addr; an empty or
// unspecified host is this host's loopback) for /readyz. nil when it
// answers 200; else why not.
func Ready(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	client := &http.Client{Timeout: Timeout}
	resp, err := client.Get("http://" + net.JoinHostPort(host, port) + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz answered %s", resp.Status)
	}
	return nil
}
