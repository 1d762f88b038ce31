// Command gencorpus writes a deterministic corpus of pipeline artifacts for
// the benchmarks in bench/:
//
//	go -C bench run ./cmd/gencorpus -n 10000 -out out/corpus-10000
//
// With -manifest it also writes a tab-separated list of every file (path,
// kind, valid, defect), which bench/run.sh uses to check that every tool
// finds the same invalid files.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/phasegate/phasegate/bench/corpus"
)

func main() {
	n := flag.Int("n", 10000, "number of artifacts")
	out := flag.String("out", "", "output directory (required; created if needed)")
	seed := flag.Int64("seed", 1, "random seed: the same n and seed give the same corpus")
	manifest := flag.String("manifest", "", "also write a TSV manifest of the files here")
	clean := flag.Bool("clean", false, "remove the output directory first")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gencorpus -n N -out DIR [-seed S] [-manifest FILE] [-clean]")
		os.Exit(2)
	}
	if err := run(*out, *n, *seed, *manifest, *clean); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(out string, n int, seed int64, manifest string, clean bool) error {
	if clean {
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	if err := corpus.Generate(out, n, seed); err != nil {
		return err
	}
	var files, invalid, bytes int
	var w *bufio.Writer
	if manifest != "" {
		f, err := os.Create(manifest)
		if err != nil {
			return err
		}
		defer f.Close()
		w = bufio.NewWriter(f)
		fmt.Fprintln(w, "path\tkind\tvalid\tdefect")
	}
	err := corpus.Walk(n, seed, func(f corpus.File) error {
		files++
		bytes += len(f.Data)
		if !f.Valid {
			invalid++
		}
		if w != nil && f.Kind != "" {
			fmt.Fprintf(w, "%s\t%s\t%t\t%s\n", f.Path, f.Kind, f.Valid, strings.ReplaceAll(f.Defect, "\t", " "))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if w != nil {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "gencorpus: %d artifacts (%d invalid) + %d companion files, %.1f MB, in %s\n", n, invalid, files-n, float64(bytes)/1e6, out)
	return nil
}
