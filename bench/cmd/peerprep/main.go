// Command peerprep prepares a corpus for the peer validators that
// bench/run.sh compares phasegate with (ajv-cli, jv, kubeconform). The peers
// do schema validation only, one schema per invocation (ajv-cli, jv) or one
// schema per document `kind` (kubeconform), so:
//
//   - it discovers and classifies the corpus exactly as phasegate does and
//     groups the files by kind under OUT/plain/<kind>/ (hard links where
//     the bytes can be used as they are: .json, and YAML renamed to .yaml,
//     since the peers pick their parser by extension; PACE's .md files are
//     YAML);
//
//   - a JSONL trace (one schema per line) becomes one JSON array, checked
//     against a wrapper schema {"type":"array","items":{"$ref":<trace>}}
//     in OUT/wrap/; learnings.md (Markdown headings) becomes the JSON value
//     phasegate derives from it;
//
//   - files phasegate cannot decode (the deliberately broken ones) are left
//     out: they are parse errors, not schema validation, and some peers
//     abort a whole batch on one;
//
//   - for kubeconform, every document is wrapped as
//     {apiVersion, kind, spec: <document>} under OUT/kube/ (a JSONL trace
//     becomes a YAML stream, one document per line), and OUT/kube-schemas/
//     holds one self-contained schema per kind: {"properties": {"spec":
//     {"$ref": <kind schema>}}} with every schema it references embedded
//     under $defs with its own $id, so nothing is fetched;
//
//   - OUT/expected-invalid.txt lists the files phasegate's schema layer
//     rejects, OUT/map.tsv maps every peer file back to the corpus file,
//     and OUT/kinds.tsv lists kind, schema, wrapper, file count.
//
//     go -C bench run ./cmd/peerprep -corpus out/corpus-10000 -out out/peers-10000
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/schemas"
)

// KubeAPIVersion is the apiVersion injected into kubeconform's copy.
const KubeAPIVersion = "bench.phasegate.dev/v1"

func main() {
	corpusDir := flag.String("corpus", "", "corpus directory (required)")
	out := flag.String("out", "", "output directory (required; replaced)")
	flag.Parse()
	if *corpusDir == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: peerprep -corpus DIR -out DIR")
		os.Exit(2)
	}
	if err := run(*corpusDir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "peerprep:", err)
		os.Exit(1)
	}
}

type kindOut struct {
	kind    *artifact.Kind
	count   int
	invalid int
}

func run(corpusDir, out string) error {
	if err := prepareOut(out); err != nil {
		return err
	}
	v, err := check.NewValidator()
	if err != nil {
		return err
	}
	mapF, err := os.Create(filepath.Join(out, "map.tsv"))
	if err != nil {
		return err
	}
	defer mapF.Close()
	p := &prep{corpus: corpusDir, out: out, v: v, mapW: bufio.NewWriter(mapF), kinds: map[string]*kindOut{}}
	if err := artifact.WalkFS(os.DirFS(corpusDir), artifact.DiscoverOptions{}, p.add); err != nil {
		return err
	}
	if err := p.mapW.Flush(); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(out, "expected-invalid.txt"), p.expected); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(out, "skipped.txt"), p.skipped); err != nil {
		return err
	}
	total, invalid, err := writeKinds(filepath.Join(out, "kinds.tsv"), p.kinds)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "peerprep: %d artifacts in %d kinds for the peers (%d rejected by phasegate's schema layer); %d undecodable files left out\n",
		total, len(p.kinds), invalid, len(p.skipped))
	return nil
}

// prepareOut makes out afresh, with the schemas for kubeconform and the
// wrappers for per-item kinds.
func prepareOut(out string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for _, d := range []string{"plain", "kube", "wrap", "kube-schemas"} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			return err
		}
	}
	docs, err := loadSchemas()
	if err != nil {
		return err
	}
	if err := writeKubeSchemas(filepath.Join(out, "kube-schemas"), docs); err != nil {
		return err
	}
	return writeWrappers(filepath.Join(out, "wrap"))
}

// prep is the peers' inputs being written.
type prep struct {
	corpus, out       string
	v                 *check.Validator
	mapW              *bufio.Writer // map.tsv
	expected, skipped []string      // rejected by phasegate's schema layer; undecodable
	kinds             map[string]*kindOut
	seq               int
}

// abs is the OS path of a file of the corpus.
func (p *prep) abs(f artifact.File) string {
	return filepath.Join(p.corpus, filepath.FromSlash(f.Path))
}

// add writes file f for the peers, if it is a decodable artifact.
func (p *prep) add(f artifact.File) error {
	data, err := os.ReadFile(p.abs(f))
	if err != nil {
		return err
	}
	k := f.Kind
	if k == nil {
		if k = artifact.Sniff(f.Rel, data); k == nil {
			return nil // not an artifact
		}
	}
	doc := artifact.Decode(f.Rel, k, data, artifact.Limits{})
	if !doc.Decoded || len(doc.Problems) > 0 {
		p.skipped = append(p.skipped, f.Rel)
		return nil
	}
	ko := p.kinds[k.ID]
	if ko == nil {
		ko = &kindOut{kind: k}
		p.kinds[k.ID] = ko
		for _, d := range []string{"plain", "kube"} {
			if err := os.MkdirAll(filepath.Join(p.out, d, k.ID), 0o755); err != nil {
				return err
			}
		}
	}
	ko.count++
	p.seq++
	if len(p.v.Validate(doc)) > 0 {
		p.expected = append(p.expected, f.Rel)
		ko.invalid++
	}
	return p.write(k, f, data, doc)
}

// write writes the artifact's plain and kube forms and its map.tsv line.
func (p *prep) write(k *artifact.Kind, f artifact.File, data []byte, doc *artifact.Document) error {
	plain, kube, ext, err := convert(k, f, data, doc)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Rel, err)
	}
	name := fmt.Sprintf("%06d%s", p.seq, ext)
	plainPath := filepath.Join(p.out, "plain", k.ID, name)
	if plain == nil {
		if err := os.Link(p.abs(f), plainPath); err != nil {
			plain = data // another file system: copy
		}
	}
	if plain != nil {
		if err := os.WriteFile(plainPath, plain, 0o644); err != nil {
			return err
		}
	}
	kubeExt := ext
	if k.PerItem {
		kubeExt = ".yaml" // a stream of documents
	}
	if err := os.WriteFile(filepath.Join(p.out, "kube", k.ID, fmt.Sprintf("%06d%s", p.seq, kubeExt)), kube, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(p.mapW, "%s\t%s\t%s\n", path.Join("plain", k.ID, name), path.Join("kube", k.ID, fmt.Sprintf("%06d%s", p.seq, kubeExt)), f.Rel)
	return nil
}

// writeKinds writes kinds.tsv, a line a kind, and returns the artifacts and
// the invalid ones they hold.
func writeKinds(file string, kinds map[string]*kindOut) (total, invalid int, err error) {
	var ids []string
	for id := range kinds {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var rows []string
	for _, id := range ids {
		ko := kinds[id]
		wrapper := "-"
		if ko.kind.PerItem {
			wrapper = path.Join("wrap", id+".array.schema.json")
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d", id, ko.kind.SchemaPath(), wrapper, kubeKind(id), ko.count, ko.invalid))
		total += ko.count
		invalid += ko.invalid
	}
	return total, invalid, writeLines(file, rows)
}

// convert returns the peers' plain copy (nil: link the original) and the
// kubeconform copy of one artifact, and the plain copy's extension.
func convert(k *artifact.Kind, f artifact.File, data []byte, doc *artifact.Document) (plain, kube []byte, ext string, err error) {
	header := func() string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\n", KubeAPIVersion, kubeKind(k.ID))
	}
	jsonWrap := func(body []byte) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"apiVersion": %q, "kind": %q, "spec": `, KubeAPIVersion, kubeKind(k.ID))
		b.Write(bytes.TrimRight(body, "\n"))
		b.WriteString("}\n")
		return b.Bytes()
	}
	switch artifact.FormatOf(k, f.Rel) {
	case artifact.FormatJSON:
		return nil, jsonWrap(data), ".json", nil
	case artifact.FormatJSONL:
		var arr, stream bytes.Buffer
		arr.WriteString("[\n")
		first := true
		for _, line := range bytes.Split(data, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			if !first {
				arr.WriteString(",\n")
			}
			first = false
			arr.Write(line)
			stream.WriteString("---\n")
			stream.WriteString(header())
			stream.WriteString("spec: ")
			stream.Write(line)
			stream.WriteByte('\n')
		}
		arr.WriteString("\n]\n")
		return arr.Bytes(), stream.Bytes(), ".json", nil
	case artifact.FormatLearnings:
		j, err := json.Marshal(doc.Value)
		if err != nil {
			return nil, nil, "", err
		}
		return append(j, '\n'), jsonWrap(j), ".json", nil
	}
	// YAML: indent the document under spec.
	var b bytes.Buffer
	b.WriteString(header())
	b.WriteString("spec:\n")
	for _, line := range strings.SplitAfter(string(bytes.TrimRight(data, "\n")), "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("  ")
		}
		b.WriteString(line)
	}
	b.WriteByte('\n')
	return nil, b.Bytes(), ".yaml", nil
}

// kubeKind turns "pace.gate-report" into "PaceGateReport".
func kubeKind(id string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '.' || r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// loadSchemas reads every embedded schema document, by $id.
func loadSchemas() (map[string]any, error) {
	docs := map[string]any{}
	paths, err := fs.Glob(schemas.FS, "*/*.schema.json")
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		data, err := fs.ReadFile(schemas.FS, p)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		docs[check.SchemaBaseURL+p] = doc
	}
	return docs, nil
}

// refs returns the schema documents (by URL) that doc references, resolved
// against base.
func refs(doc any, base *url.URL, out map[string]bool) {
	switch t := doc.(type) {
	case map[string]any:
		if id, ok := t["$id"].(string); ok {
			if u, err := base.Parse(id); err == nil {
				base = u
			}
		}
		if r, ok := t["$ref"].(string); ok {
			if u, err := base.Parse(r); err == nil {
				u.Fragment = ""
				out[u.String()] = true
			}
		}
		for _, v := range t {
			refs(v, base, out)
		}
	case []any:
		for _, v := range t {
			refs(v, base, out)
		}
	}
}

// writeKubeSchemas writes kubeconform's schema per kind: the spec wrapper
// with the kind's schema and everything it references embedded.
func writeKubeSchemas(dir string, docs map[string]any) error {
	for _, k := range artifact.Kinds() {
		root := check.SchemaBaseURL + k.SchemaPath()
		need := map[string]bool{root: true}
		for changed := true; changed; {
			changed = false
			for u := range need {
				base, _ := url.Parse(u)
				found := map[string]bool{}
				refs(docs[u], base, found)
				for r := range found {
					if _, ok := docs[r]; ok && !need[r] {
						need[r] = true
						changed = true
					} else if !ok && r != base.String() {
						return fmt.Errorf("%s references %s, which is not an embedded schema", u, r)
					}
				}
			}
		}
		defs := map[string]any{}
		var urls []string
		for u := range need {
			urls = append(urls, u)
		}
		sort.Strings(urls)
		for i, u := range urls {
			defs[fmt.Sprintf("embedded%d", i)] = docs[u]
		}
		wrapper := map[string]any{
			"$schema":  "https://json-schema.org/draft/2020-12/schema",
			"$id":      "https://bench.phasegate.invalid/kube/" + k.ID + ".json",
			"type":     "object",
			"required": []string{"apiVersion", "kind", "spec"},
			"properties": map[string]any{
				"apiVersion": map[string]any{"const": KubeAPIVersion},
				"kind":       map[string]any{"const": kubeKind(k.ID)},
				"spec":       map[string]any{"$ref": root},
			},
			"$defs": defs,
		}
		data, err := json.MarshalIndent(wrapper, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, strings.ToLower(kubeKind(k.ID))+".json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeWrappers writes the array wrapper of each per-item (JSONL) kind.
func writeWrappers(dir string) error {
	for _, k := range artifact.Kinds() {
		if !k.PerItem {
			continue
		}
		data, err := json.MarshalIndent(map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"$id":     "https://bench.phasegate.invalid/wrap/" + k.ID + ".array.schema.json",
			"title":   "A JSONL file of " + k.ID + " as one JSON array: each element is one line",
			"type":    "array",
			"items":   map[string]any{"$ref": check.SchemaBaseURL + k.SchemaPath()},
		}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, k.ID+".array.schema.json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeLines(p string, lines []string) error {
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		return errors.New("writing " + p + ": " + err.Error())
	}
	return nil
}
