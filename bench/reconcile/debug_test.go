package reconcile

import (
	"context"
	"testing"
)

func TestDebugCalls(t *testing.T) {
	debugCalls = func(s string) { t.Log(s) }
	defer func() { debugCalls = nil }()
	if _, err := Run(context.Background(), Options{Issues: 20, Comments: 150, Changed: 3, Passes: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestDebugProfile(t *testing.T) {
	if _, err := Run(context.Background(), Options{Issues: 100, Comments: 300, Changed: 10, Passes: 1, Log: testWriter{t}}); err != nil {
		t.Fatal(err)
	}
}
