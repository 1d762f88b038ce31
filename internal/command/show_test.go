package command

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestShow prints the body of a FuzzParseMarkdown corpus file (SHOW=path).
func TestShow(t *testing.T) {
	p := os.Getenv("SHOW")
	if p == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(p)
	if !strings.HasPrefix(p, "/") {
		data, _ = os.ReadFile("../../" + p)
	}
	line := strings.Split(string(data), "\n")[1]
	line = strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")")
	raw, err := strconv.Unquote(line)
	if err != nil {
		raw2, _ := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(strings.Split(string(data), "\n")[1], "string("), ")"))
		fmt.Printf("%q\n%s\n", raw2, dump(Parse(raw2)))
		return
	}
	var b strings.Builder
	for _, c := range []byte(raw) {
		b.WriteString(fragments[int(c)%len(fragments)])
	}
	fmt.Printf("%q\n%s\n", b.String(), dump(Parse(b.String())))
}
