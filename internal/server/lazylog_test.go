package server

import (
	"bytes"
	"log/slog"
	"testing"
)

// TestLazyAttrs: a handler given its attributes late writes what the same
// handler given them at once writes, through With and WithGroup, and a
// disabled level formats nothing.
func TestLazyAttrs(t *testing.T) {
	t.Parallel()
	attrs := []slog.Attr{slog.String("delivery", "d-1"), slog.Int64("installation", 77)}
	tests := []struct {
		name string
		log  func(l *slog.Logger)
	}{
		{"a record", func(l *slog.Logger) { l.Info("handled", "resolutions", 1) }},
		{"with more attributes", func(l *slog.Logger) { l.With("comment", 5).Warn("tamper", "author", "x") }},
		{"in a group", func(l *slog.Logger) { l.WithGroup("g").With("a", 1).Error("e", "b", 2) }},
		{"below the level", func(l *slog.Logger) { l.Debug("not written", "x", 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var eager, lazy bytes.Buffer
			opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}
			tt.log(slog.New(slog.NewJSONHandler(&eager, opts).WithAttrs(attrs)))
			tt.log(slog.New(&lazyAttrs{h: slog.NewJSONHandler(&lazy, opts), attrs: attrs}))
			if eager.String() != lazy.String() {
				t.Errorf("lazy wrote %q, eager %q", lazy.String(), eager.String())
			}
		})
	}
}
