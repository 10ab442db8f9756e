package spec

import (
	"fmt"
	"strings"
	"testing"
)

// A spec too large for the value limit says so, naming the file, the limit
// and its size; only one that reaches it through aliases mentions aliases.
func TestTooManyValues(t *testing.T) {
	var big strings.Builder
	big.WriteString("name: big\nevaluator: builtin:reduce\nparams:\n  block: [")
	for i := range maxNodes + 10 {
		fmt.Fprintf(&big, "%d,", i+1)
	}
	big.WriteString("1]\n")
	bomb := "name: bomb\na: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	jsonBig := `{"name": "big", "params": {"block": [` + strings.Repeat("1,", maxNodes+10) + `1]}}`
	tests := []struct {
		file, data string
		want       []string
		aliases    bool
	}{
		{"/specs/big.yaml", big.String(), []string{"/specs/big.yaml: too large: a spec holds at most 100000 values; this file has " + fmt.Sprint(big.Len()) + " bytes"}, false},
		{"/specs/big.json", jsonBig, []string{"/specs/big.json: too large: a spec holds at most 100000 values"}, false},
		{"/specs/bomb.yaml", bomb, []string{"/specs/bomb.yaml: too large", "through its YAML aliases"}, true},
	}
	for _, tt := range tests {
		_, err := Parse(tt.file, []byte(tt.data))
		if err == nil {
			t.Errorf("Parse(%s) = nil error, want too large", tt.file)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%s) = %v, want it to say %q", tt.file, err, w)
			}
		}
		if got := strings.Contains(err.Error(), "alias"); got != tt.aliases {
			t.Errorf("Parse(%s) = %v: mentions aliases %v, want %v", tt.file, err, got, tt.aliases)
		}
	}
}
