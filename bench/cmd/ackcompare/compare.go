package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/phasegate/phasegate/bench/serve"
)

// compare is the whole comparison.
type compare struct {
	duration, warmup time.Duration
	rounds, size     int
	unique           bool
	scenarios        []scenario
	cpuProfile       string // the phasegate child's -cpuprofile ("": none)
}

// measurement is one measured run of one server.
type measurement struct {
	res serve.Result
	cpu time.Duration // the server process's CPU over the run
}

// rate is acknowledged (2xx) deliveries per second.
func (m measurement) rate() float64 { return m.res.Rate() }

// cpuPer is the server's CPU per answered delivery, in µs.
func (m measurement) cpuPer() float64 {
	n := m.res.OK() + m.res.Non2xx()
	if n == 0 {
		return 0
	}
	return float64(m.cpu) / float64(time.Microsecond) / float64(n)
}

// run starts both servers, runs every scenario on both each round (the
// server order rotating) and prints every run and the medians.
func (c compare) run(ctx context.Context, peerBin string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	header()
	pg, err := start("phasegate", self, "-role", "phasegate", "-cpuprofile", c.cpuProfile)
	if err != nil {
		return err
	}
	defer pg.stop()
	peer, err := start("go-githubapp", peerBin)
	if err != nil {
		return err
	}
	defer peer.stop()
	servers := []*server{pg, peer}
	fmt.Printf("phasegate (pid %d) at %s; go-githubapp (pid %d) at %s\n\n", pg.cmd.Process.Pid, pg.url, peer.cmd.Process.Pid, peer.url)

	got := map[string][][]measurement{} // server → scenario → rounds
	for _, s := range servers {
		got[s.name] = make([][]measurement, len(c.scenarios))
	}
	fmt.Println("| round | server | load | " + tableCols + " |")
	fmt.Println("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for r := 0; r < c.rounds; r++ {
		for i, sc := range c.scenarios {
			for k := range servers {
				s := servers[(k+r)%len(servers)] // rotate the order each round
				m, err := c.measure(ctx, s, sc)
				if err != nil {
					return err
				}
				got[s.name][i] = append(got[s.name][i], m)
				fmt.Printf("| %d | %s | %s | %s |\n", r+1, s.name, sc, row(m))
			}
		}
	}
	fmt.Printf("\nload average after: %s\n\n", loadavg())
	c.summary(got)
	return nil
}

const tableCols = "deliveries/s (2xx) | p50 | p99 | max | server CPU / delivery | non-2xx | errors"

func row(m measurement) string {
	return fmt.Sprintf("%.0f | %s | %s | %s | %.0f µs | %d | %d", m.rate(), ms(m.res.Quantile(0.5)), ms(m.res.Quantile(0.99)),
		ms(m.res.Max()), m.cpuPer(), m.res.Non2xx(), m.res.Errors)
}

// measure warms the server up, then runs the load, reading the server's CPU
// time before and after.
func (c compare) measure(ctx context.Context, s *server, sc scenario) (measurement, error) {
	l := serve.Load{URL: s.url, Conns: sc.conns, Rate: sc.rate, Size: c.size, UniqueComments: c.unique}
	if c.warmup > 0 {
		l.Duration = c.warmup
		if _, err := serve.Run(ctx, l); err != nil {
			return measurement{}, err
		}
	}
	l.Duration = c.duration
	before, err := s.cpu()
	if err != nil {
		return measurement{}, err
	}
	res, err := serve.Run(ctx, l)
	if err != nil {
		return measurement{}, err
	}
	after, err := s.cpu()
	if err != nil {
		return measurement{}, err
	}
	if res.Errors > 0 {
		fmt.Fprintf(os.Stderr, "%s, %s: %d transport errors, first: %v\n", s.name, sc, res.Errors, res.FirstErr)
	}
	if ctx.Err() != nil {
		return measurement{}, ctx.Err()
	}
	return measurement{res: res, cpu: after - before}, nil
}

// summary prints the medians over the rounds, phasegate against the peer.
func (c compare) summary(got map[string][][]measurement) {
	fmt.Printf("Medians of %d rounds (%s each):\n\n", c.rounds, c.duration)
	fmt.Println("| | phasegate | go-githubapp | ratio |")
	fmt.Println("| --- | --: | --: | --: |")
	pg, peer := got["phasegate"], got["go-githubapp"]
	for i, sc := range c.scenarios {
		metric := func(name, unit string, f func(measurement) float64, better string) {
			a, b := median(pg[i], f), median(peer[i], f)
			fmt.Printf("| %s: %s | %s | %s | %s |\n", sc, name, num(a, unit), num(b, unit), ratio(a, b, better))
		}
		metric("deliveries/s", "/s", measurement.rate, "higher")
		metric("p50", "ms", func(m measurement) float64 { return msf(m.res.Quantile(0.5)) }, "lower")
		metric("p99", "ms", func(m measurement) float64 { return msf(m.res.Quantile(0.99)) }, "lower")
		metric("server CPU / delivery", "µs", measurement.cpuPer, "lower")
	}
}

func median(ms []measurement, f func(measurement) float64) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	sort.Float64s(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// ratio is phasegate ÷ peer, with which way is better.
func ratio(a, b float64, better string) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f× (%s is better)", a/b, better)
}

func num(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmt.Sprintf("%.2f ms", v)
	case "µs":
		return fmt.Sprintf("%.0f µs", v)
	}
	return fmt.Sprintf("%.0f%s", v, unit)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", msf(d)) }
