package quasim_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/quasim/quasim/cmd/quasimctl/cli"
)

// docFiles is README.md and every Markdown file under docs/ and examples/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, root := range []string{"docs", "examples"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineRun = regexp.MustCompile("`([^`]+)`")
	nonSlug   = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// anchors are the GitHub anchors of a Markdown file's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		h = strings.ReplaceAll(h, "`", "")
		h = strings.ReplaceAll(nonSlug.ReplaceAllString(h, ""), " ", "-")
		for a, n := h, 1; ; n++ {
			if !out[a] {
				out[a] = true
				break
			}
			a = h + "-" + string(rune('0'+n))
		}
	}
	return out
}

// Every relative link in the docs reaches a file, and its #anchor a heading.
func TestDocLinks(t *testing.T) {
	texts := map[string]string{}
	read := func(p string) (string, bool) {
		if s, ok := texts[p]; ok {
			return s, true
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", false
		}
		texts[p] = string(b)
		return string(b), true
	}
	for _, f := range docFiles(t) {
		text, _ := read(f)
		for i, line := range strings.Split(text, "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				full := f
				if path != "" {
					full = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(full); err != nil {
					t.Errorf("%s:%d: link %s: no file %s", f, i+1, target, full)
					continue
				}
				if anchor == "" || !strings.HasSuffix(full, ".md") {
					continue
				}
				body, _ := read(full)
				if !anchors(body)[anchor] {
					t.Errorf("%s:%d: link %s: no heading #%s in %s", f, i+1, target, anchor, full)
				}
			}
		}
	}
}

// The unit's comments name sections of the docs as (FILE, "Heading"): each
// file has that heading. The unit once sent readers to a README section
// that did not exist.
func TestUnitDocReferences(t *testing.T) {
	unit, err := os.ReadFile("quasimd.service")
	if err != nil {
		t.Fatal(err)
	}
	var comments []string
	for _, l := range strings.Split(string(unit), "\n") {
		if strings.HasPrefix(l, "#") {
			comments = append(comments, strings.TrimSpace(strings.TrimPrefix(l, "#")))
		}
	}
	refs := regexp.MustCompile(`\(([\w./-]+\.md|README), "([^"]+)"`).FindAllStringSubmatch(strings.Join(comments, " "), -1)
	if len(refs) == 0 {
		t.Fatal(`quasimd.service names no (FILE, "Heading"); update this test if that is meant`)
	}
	for _, r := range refs {
		file := r[1]
		if file == "README" {
			file = "README.md"
		}
		body, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("quasimd.service refers to %s: %v", r[1], err)
			continue
		}
		slug := strings.ReplaceAll(nonSlug.ReplaceAllString(strings.ToLower(r[2]), ""), " ", "-")
		if !anchors(string(body))[slug] {
			t.Errorf("quasimd.service refers to %s, %q: no such heading", r[1], r[2])
		}
	}
}

// quoted is one command line the docs quote, with where.
type quoted struct {
	where string
	words []string
}

// quotedCommands finds the command lines that run prog in the docs: each
// line of a code block, and each inline code span of a paragraph.
func quotedCommands(t *testing.T, prog string) []quoted {
	t.Helper()
	var out []quoted
	add := func(where, c string) {
		if w, ok := commandWords(c, prog); ok {
			out = append(out, quoted{where: where, words: w})
		}
	}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fence, para, paraLine := false, "", 0
		flush := func() {
			for _, m := range inlineRun.FindAllStringSubmatch(para, -1) {
				add(f+":"+strconv.Itoa(paraLine), m[1])
			}
			para = ""
		}
		for i, line := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(strings.TrimSpace(line), "```"):
				flush()
				fence = !fence
			case fence:
				add(f+":"+strconv.Itoa(i+1), line)
			case strings.TrimSpace(line) == "":
				flush()
			default:
				if para == "" {
					paraLine = i + 1
				}
				para += " " + line
			}
		}
		flush()
	}
	return out
}

// commandWords returns the words after prog where a shell line runs it (as
// prog, a path ending in /prog, or go run ./cmd/prog) in command position,
// up to the first shell operator or comment.
func commandWords(line, prog string) ([]string, bool) {
	fields := strings.Fields(line)
	start := true // at a command's start
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		isProg := f == prog || f == "$("+prog || strings.HasSuffix(f, "/"+prog) && !strings.HasPrefix(f, "./cmd/") && !strings.Contains(f, "=")
		if start && f == "go" && i+2 < len(fields) && fields[i+1] == "run" && fields[i+2] == "./cmd/"+prog {
			isProg, i = true, i+2
		}
		if start && isProg {
			var words []string
			for _, w := range fields[i+1:] {
				end := strings.HasSuffix(w, ";") || strings.HasSuffix(w, ")")
				w = strings.TrimRight(w, ";)")
				if w == "" || strings.ContainsAny(w[:1], "|;&>#<") {
					break
				}
				words = append(words, strings.Trim(w, `"',`))
				if end {
					break
				}
			}
			return words, true
		}
		switch {
		case f == "|" || f == "&&" || f == "||" || f == "do" || f == "then" || strings.HasSuffix(f, ";") ||
			strings.HasSuffix(f, "$(") || f == "sudo" || f == "time" || f == "nohup" || f == "exec" || f == "-E":
			start = true
		case start && strings.Contains(f, "=") && !strings.HasPrefix(f, "-"):
			// an environment assignment before the command
		default:
			start = false
		}
	}
	return nil, false
}

// Every quasimctl command and flag the docs quote exists.
func TestDocCommandsQuasimctl(t *testing.T) {
	root := cli.Command()
	n := 0
	for _, q := range quotedCommands(t, "quasimctl") {
		var path []string
		for i := 0; i < len(q.words); i++ {
			w := q.words[i]
			if name, ok := flagName(w); ok {
				// a global flag before the command, with its value
				if f := root.PersistentFlags().Lookup(name); f != nil && f.Value.Type() != "bool" && !strings.Contains(w, "=") {
					i++
				}
				continue
			}
			if strings.HasPrefix(w, "-") || len(path) > 0 && isArg(w) {
				break
			}
			path = append(path, w)
		}
		cmd, rest, err := root.Find(path)
		if err != nil {
			t.Errorf("%s: quasimctl %s: %v", q.where, strings.Join(q.words, " "), err)
			continue
		}
		if cmd == root && len(rest) > 0 && !isPlaceholder(rest[0]) {
			t.Errorf("%s: quasimctl %s: no command %q", q.where, strings.Join(q.words, " "), rest[0])
			continue
		}
		n++
		if cmd.DisableFlagParsing {
			continue // its flags are another program's (quasimctl db runs quasimd db)
		}
		for _, w := range q.words {
			if name, ok := flagName(w); ok && !hasFlag(cmd, name) {
				t.Errorf("%s: quasimctl %s: %s has no flag %s", q.where, strings.Join(q.words, " "), cmd.CommandPath(), w)
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d quasimctl commands in the docs; the scan is broken", n)
	}
}

// isArg is a word that cannot be a command's name: a placeholder (K, ID),
// a path or a value.
func isArg(w string) bool {
	return strings.ToUpper(w) == w || strings.ContainsAny(w, "/.,=$<>[]{}:0123456789")
}

// isPlaceholder is a word the docs use in place of an argument ("...").
func isPlaceholder(w string) bool { return w == "..." || w == "[...]" }

// flagName is the name of a flag word: --name, --name=value, -x.
func flagName(w string) (string, bool) {
	switch {
	case w == "--" || w == "-":
		return "", false
	case strings.HasPrefix(w, "--"):
		name, _, _ := strings.Cut(w[2:], "=")
		return name, name != "" && !strings.ContainsAny(name, ".…[")
	case strings.HasPrefix(w, "-") && len(w) == 2:
		return w[1:], true
	}
	return "", false
}

func hasFlag(cmd *cobra.Command, name string) bool {
	if name == "help" || name == "h" {
		return true
	}
	if len(name) == 1 {
		return cmd.Flags().ShorthandLookup(name) != nil || cmd.InheritedFlags().ShorthandLookup(name) != nil
	}
	return cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
}

// Every quasimd flag the docs quote exists: read from the real binary's
// --help.
func TestDocCommandsQuasimd(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds quasimd")
	}
	bin := filepath.Join(t.TempDir(), "quasimd")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/quasimd").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	flags := map[string]bool{"help": true, "h": true}
	sc := bufio.NewScanner(bytes.NewReader(help))
	flagLine := regexp.MustCompile(`^\s+-([a-z][a-z0-9-]*)`)
	for sc.Scan() {
		if m := flagLine.FindStringSubmatch(sc.Text()); m != nil {
			flags[m[1]] = true
		}
	}
	if len(flags) < 10 {
		t.Fatalf("quasimd --help lists %d flags; the scan is broken:\n%s", len(flags), help)
	}
	subs := map[string][]string{"db": {"check", "salvage"}, "opencl-worker": {""}}
	n := 0
	for _, q := range quotedCommands(t, "quasimd") {
		n++
		if len(q.words) > 0 && !strings.HasPrefix(q.words[0], "-") {
			ok := false
			sub, known := subs[q.words[0]]
			ok = known && len(q.words) == 1
			for _, s := range sub {
				ok = ok || len(q.words) > 1 && (q.words[1] == s || s == "")
			}
			if !ok && !isPlaceholder(q.words[0]) {
				t.Errorf("%s: quasimd %s: no such command", q.where, strings.Join(q.words, " "))
			}
			continue
		}
		for _, w := range q.words {
			if name, ok := flagName(w); ok && !flags[name] {
				var have []string
				for f := range flags {
					have = append(have, f)
				}
				sort.Strings(have)
				t.Errorf("%s: quasimd %s: no flag %s (has %s)", q.where, strings.Join(q.words, " "), w, strings.Join(have, " "))
			}
		}
	}
	if n < 5 {
		t.Errorf("found %d quasimd commands in the docs; the scan is broken", n)
	}
}
