package command

import (
	"os"
	"testing"

	"github.com/yuin/goldmark/text"
)

func TestGMDump(t *testing.T) {
	b := os.Getenv("GMBODY")
	if b == "" {
		t.Skip()
	}
	doc := markdown.Parser().Parse(text.NewReader([]byte(b)))
	doc.Dump([]byte(b), 0)
}
