// Command gendocs writes quasim's manual pages and shell completions from
// the commands themselves: quasimctl's from its cobra tree (cobra's
// generators), quasimd's from the flags the built binary prints for
// --help. The Debian package installs what it writes (make deb).
//
//	go run ./internal/cmd/gendocs -quasimd bin/quasimd -version 1.2.3 -out bin/share
//
// writes OUT/man/man1/quasimctl*.1, OUT/man/man8/quasimd.8 and
// OUT/completions/{quasimctl.bash,_quasimctl,quasimctl.fish}. Dates come
// from $SOURCE_DATE_EPOCH when it is set, so builds are reproducible.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/quasim/quasim/cmd/quasimctl/cli"
)

func main() {
	out := flag.String("out", "bin/share", "directory to write man/ and completions/ into")
	quasimd := flag.String("quasimd", "bin/quasimd", "the built quasimd, whose --help gives its flags")
	ver := flag.String("version", "dev", "version named in the pages")
	flag.Parse()
	if err := run(*out, *quasimd, *ver); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(out, quasimd, ver string) error {
	date := time.Now().UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("$SOURCE_DATE_EPOCH %q: %v", s, err)
		}
		date = time.Unix(n, 0).UTC()
	}
	root := cli.Command()
	root.DisableAutoGenTag = true
	man1 := filepath.Join(out, "man", "man1")
	comp := filepath.Join(out, "completions")
	for _, d := range []string{man1, filepath.Join(out, "man", "man8"), comp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := quasimctlPages(root, ver, date, man1); err != nil {
		return err
	}
	if err := completions(root, comp); err != nil {
		return err
	}
	help, err := exec.Command(quasimd, "--help").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --help: %v\n%s", quasimd, err, help)
	}
	page, err := quasimdPage(help, ver, date)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "man", "man8", "quasimd.8"), page, 0o644)
}

// userSocketRule is where a user's own quasimd listens, as the rule
// rather than this machine's path for whoever builds the pages.
const userSocketRule = "$XDG_RUNTIME_DIR/quasim/quasimd.sock (else /tmp/quasim-UID/quasimd.sock; root's is the service's)"

// quasimctlPages writes quasimctl(1) and a page per subcommand into dir,
// with the --socket default as a rule and the exit status of --help.
func quasimctlPages(root *cobra.Command, ver string, date time.Time, dir string) error {
	if f := root.PersistentFlags().Lookup("socket"); f != nil {
		f.Usage = cli.SocketUsage(userSocketRule)
	}
	hdr := &doc.GenManHeader{Title: "QUASIMCTL", Section: "1", Source: "quasim " + ver, Manual: "quasim manual", Date: &date}
	if err := doc.GenManTree(root, hdr, dir); err != nil {
		return fmt.Errorf("quasimctl man pages: %w", err)
	}
	path := filepath.Join(dir, "quasimctl.1")
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sec strings.Builder
	sec.WriteString(".SH EXIT STATUS\n")
	for _, l := range strings.Split(strings.TrimSpace(cli.ExitStatus), "\n") {
		code, what, ok := strings.Cut(strings.TrimSpace(l), " ")
		if !ok { // the heading
			continue
		}
		sec.WriteString(".TP\n\\fB" + esc(code) + "\\fR\n" + esc(strings.TrimSpace(what)) + "\n")
	}
	at := bytes.Index(page, []byte(".SH SEE ALSO"))
	if at < 0 {
		at = len(page)
	}
	out := append(append(bytes.Clone(page[:at]), sec.String()...), page[at:]...)
	return os.WriteFile(path, out, 0o644)
}

func completions(root *cobra.Command, dir string) error {
	write := func(name string, gen func(*bytes.Buffer) error) error {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
	}
	if err := write("quasimctl.bash", func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) }); err != nil {
		return err
	}
	if err := write("_quasimctl", func(b *bytes.Buffer) error { return root.GenZshCompletion(b) }); err != nil {
		return err
	}
	return write("quasimctl.fish", func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) })
}

// flagLine is a flag as Go's flag package prints it: "  -name type".
var flagLine = regexp.MustCompile(`^  -([a-z][a-z0-9-]*)(?: (\w+))?$`)

// quasimdPage is quasimd(8) in roff, its options read from --help.
func quasimdPage(help []byte, ver string, date time.Time) ([]byte, error) {
	type opt struct{ name, typ, usage string }
	var opts []opt
	sc := bufio.NewScanner(bytes.NewReader(help))
	for sc.Scan() {
		line := sc.Text()
		if m := flagLine.FindStringSubmatch(line); m != nil {
			opts = append(opts, opt{name: m[1], typ: m[2]})
			continue
		}
		if strings.HasPrefix(line, "    \t") && len(opts) > 0 {
			o := &opts[len(opts)-1]
			o.usage = strings.TrimSpace(o.usage + " " + strings.TrimSpace(line))
		}
	}
	if len(opts) < 10 {
		return nil, fmt.Errorf("quasimd --help listed %d flags; is it quasimd?\n%s", len(opts), help)
	}
	var b strings.Builder
	fmt.Fprintf(&b, ".TH \"QUASIMD\" \"8\" \"%s\" \"quasim %s\" \"quasim manual\"\n", date.Format("Jan 2006"), esc(ver))
	b.WriteString(`.SH NAME
quasimd \- the quasim kernel-tuning daemon
.SH SYNOPSIS
.B quasimd
[\fIflags\fR]
.br
.B quasimd db
\fBcheck\fR|\fBsalvage\fR ...
.SH DESCRIPTION
quasimd tunes compute kernels on this machine on cron-triggered cycles,
measures candidate configs on the real device while it is idle of other
work, checks the winners' output, signs a certificate for each, keeps
trials, policies and certificates in a bbolt state file, and serves the
best certified config of each kernel over a Unix socket
(see \fBquasimctl\fR(1)). With no kernel specs it tunes its built-in CPU
kernels.
.PP
\fBquasimd db check\fR and \fBquasimd db salvage\fR check the state file
offline, or copy its readable records into a new one; \fBquasimd db\fR
prints their usage.
.SH OPTIONS
Each flag is also read from the environment variable named in its
description, where the flag is not given. Defaults shown are root's.
`)
	for _, o := range opts {
		b.WriteString(".TP\n\\fB\\-\\-" + esc(o.name) + "\\fR")
		if o.typ != "" {
			b.WriteString(" \\fI" + esc(o.typ) + "\\fR")
		}
		b.WriteString("\n" + esc(o.usage) + "\n")
	}
	b.WriteString(`.SH FILES
Under systemd (quasimd.service) the paths come from the directories the
unit asks for: the socket /run/quasim/quasimd.sock, device lock files in
/run/lock/quasim, the state file /var/lib/quasim/quasim.db and kernel
specs in /etc/quasim/kernels.d. Run by a user, the socket is
$XDG_RUNTIME_DIR/quasim/quasimd.sock and the state
~/.local/state/quasim/quasim.db.
.SH EXIT STATUS
0 on a clean stop (SIGTERM or SIGINT), 1 on a runtime error, 78 for bad
flags, environment or configuration, and 65 when the state file is
damaged (see \fBquasimd db\fR); systemd does not restart it after 78 or 65.
.SH SEE ALSO
\fBquasimctl\fR(1), \fBsystemd.service\fR(5); /usr/share/doc/quasim/
`)
	return []byte(b.String()), nil
}

// esc escapes text for roff: backslashes, and a leading dot or quote.
func esc(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
