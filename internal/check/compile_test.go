package check

import (
	"context"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/schemas"
)

// TestEmbeddedSchemasCompile compiles every kind's embedded schema: the
// Validator compiles a kind only when a run first meets it, so this is where
// a broken schema is caught whatever the fixtures hold.
func TestEmbeddedSchemasCompile(t *testing.T) {
	v, err := newValidator(schemas.FS)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CompileAll(); err != nil {
		t.Fatal(err)
	}
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestSchemaCompiledOnceOnFirstUse checks that a kind's schema is compiled
// only when first needed, once, however many workers ask at the same time.
func TestSchemaCompiledOnceOnFirstUse(t *testing.T) {
	v, err := newValidator(schemas.FS)
	if err != nil {
		t.Fatal(err)
	}
	k := artifact.KindByID("pace.plan")
	if k == nil {
		t.Fatal("no kind pace.plan")
	}
	for _, other := range artifact.Kinds() {
		if v.schemas[other.ID].compiled() {
			t.Fatalf("%s compiled before any use", other.ID)
		}
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := v.schema(k.ID)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] == nil || got[i] != got[0] {
			t.Fatalf("worker %d got schema %p, want the one compiled schema %p", i, got[i], got[0])
		}
	}
	for _, other := range artifact.Kinds() {
		if want := other.ID == k.ID; v.schemas[other.ID].compiled() != want {
			t.Errorf("%s compiled = %v, want %v", other.ID, !want, want)
		}
	}
	if s, err := v.schema("no.such-kind"); s != nil || err != nil {
		t.Errorf("schema of an unknown kind = %v, %v; want nil, nil", s, err)
	}
}

// TestBrokenSchemaFailsTheRun checks that a schema that does not compile is
// the run's error (a build defect), not a silent pass.
func TestBrokenSchemaFailsTheRun(t *testing.T) {
	paths, err := fs.Glob(schemas.FS, "*/*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, p := range paths {
		data, err := fs.ReadFile(schemas.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		if p == artifact.KindByID("scc.verdict").SchemaPath() {
			data = []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "minProperties": "two"}`)
		}
		fsys[p] = &fstest.MapFile{Data: data}
	}
	v, err := newValidator(fsys)
	if err != nil {
		t.Fatal(err)
	}
	tree := fstest.MapFS{
		"artifacts/T-1/verdict.json": &fstest.MapFile{Data: []byte(`{"task_id": "T-1", "verdict": "PASS"}`)},
	}
	_, err = v.RunFS(context.Background(), tree, Options{})
	if err == nil || !strings.Contains(err.Error(), "compiling schema scc/verdict.schema.json") {
		t.Fatalf("RunFS error = %v, want the schema that does not compile", err)
	}
	if err := v.CompileAll(); err == nil {
		t.Error("CompileAll accepted a broken schema")
	}
}

// CompileAll compiles every kind's schema now and reports the first that
// does not compile (the tests' check that the embedded schemas are sound).
func (v *Validator) CompileAll() error {
	for _, k := range artifact.Kinds() {
		if _, err := v.schema(k.ID); err != nil {
			return err
		}
	}
	return nil
}
