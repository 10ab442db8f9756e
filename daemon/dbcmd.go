package daemon

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/quasim/quasim/internal/store"
)

// ErrDamaged is the error Run returns when the state file is damaged: it
// was not written to, and `quasimd db salvage` copies what is readable.
var ErrDamaged = store.ErrDamaged

// StateFile is the store's file name in the state directory.
const StateFile = "quasim.db"

// DB runs `quasimd db check|salvage` with args (after "db") and returns the
// exit code: 0 when the file is sound (check) or was salvaged, 1 when check
// found damage or corrupt records or a step failed, 2 for a usage error.
// Neither writes to the file it reads.
func DB(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprint(stderr, `usage: quasimd db check   [--state-dir DIR | --db FILE] [--json] [--timeout D]
       quasimd db salvage [--state-dir DIR | --db FILE] --to NEW [--json]

check reads every page and record of the state file, without writing, and
reports damage (which stops quasimd from starting) and corrupt records
(which listings skip). salvage copies every readable record into the new
file NEW and reports what was lost; stop quasimd, keep the damaged file
aside and move NEW into its place. Both wait for a running quasimd to let
go of the file: stop it first.
`)
	}
	if len(args) == 0 || (args[0] != "check" && args[0] != "salvage") {
		usage()
		return 2
	}
	cmd := args[0]
	fs := flag.NewFlagSet("quasimd db "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage
	defDir := DefaultStateDir()
	if d, ok := os.LookupEnv("QUASIMD_STATE_DIR"); ok {
		defDir = d
	}
	stateDir := fs.String("state-dir", defDir, "directory of the store ($QUASIMD_STATE_DIR)")
	file := fs.String("db", "", "the state file itself (overrides --state-dir)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound of the check")
	to := fs.String("to", "", "salvage: the new file to write (must not exist)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "quasimd db %s: unexpected arguments %q\n", cmd, fs.Args())
		return 2
	}
	path := *file
	if path == "" {
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "state-dir" })
		_, fromEnv := os.LookupEnv("QUASIMD_STATE_DIR")
		var note string
		path, note = dbFile(filepath.Join(*stateDir, StateFile), filepath.Join(systemStateDir, StateFile), given || fromEnv)
		if note != "" {
			fmt.Fprintf(stderr, "quasimd db %s: %s\n", cmd, note)
		}
	}
	opt := store.Options{LockTimeout: 2 * time.Second, CheckTimeout: *timeout}
	if cmd == "check" {
		rep, err := store.CheckFile(path, opt)
		if err != nil {
			fmt.Fprintf(stderr, "quasimd db check: %v\n", err)
			return 1
		}
		if *asJSON {
			printJSON(stdout, checkJSON(rep))
		} else {
			printCheck(stdout, rep)
		}
		if rep.Damaged() || len(rep.Corrupt) > 0 || !rep.Complete {
			return 1
		}
		return 0
	}
	if *to == "" {
		fmt.Fprintln(stderr, "quasimd db salvage: --to NEW is required")
		return 2
	}
	rep, err := store.Salvage(path, *to, opt)
	if err != nil {
		fmt.Fprintf(stderr, "quasimd db salvage: %v\n", err)
		return 1
	}
	if *asJSON {
		printJSON(stdout, salvageJSON(rep))
	} else {
		printSalvage(stdout, rep)
	}
	return 0
}

// dbFile is the state file db reads: own (the user's default, or the one
// asked for), else, when none was asked for and the user has none, the
// service's, which quasimctl talks to when no daemon of theirs runs; note
// says when it is the service's.
func dbFile(own, service string, asked bool) (path, note string) {
	if asked || own == service || exists(own) || !exists(service) {
		return own, ""
	}
	return service, "no state file of your own at " + own + ": reading the service's, " + service
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

type corruptJSON struct {
	Bucket string `json:"bucket"`
	Where  string `json:"where"`
	Error  string `json:"error"`
}

func corruptList(cs []store.Corruption) []corruptJSON {
	out := make([]corruptJSON, len(cs))
	for i, c := range cs {
		out[i] = corruptJSON{Bucket: c.Bucket, Where: c.Where, Error: c.Err.Error()}
	}
	return out
}

func checkJSON(r *store.Report) any {
	return struct {
		Path     string        `json:"path"`
		Size     int64         `json:"size"`
		Buckets  int           `json:"buckets"`
		Keys     int           `json:"keys"`
		TookS    float64       `json:"took_s"`
		Complete bool          `json:"complete"`
		Damaged  bool          `json:"damaged"`
		Problems []string      `json:"problems"`
		Corrupt  []corruptJSON `json:"corrupt"`
	}{r.Path, r.Size, r.Buckets, r.Keys, r.Took.Seconds(), r.Complete, r.Damaged(), nonNil(r.Problems), corruptList(r.Corrupt)}
}

func salvageJSON(r *store.SalvageReport) any {
	return struct {
		From       string         `json:"from"`
		To         string         `json:"to"`
		Copied     map[string]int `json:"copied"`
		Lost       map[string]int `json:"lost"`
		Corrupt    []corruptJSON  `json:"corrupt"`
		Unreadable []string       `json:"unreadable"`
	}{r.From, r.To, r.Copied, r.Lost, corruptList(r.Corrupt), nonNil(r.Unreadable)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func printCheck(w io.Writer, r *store.Report) {
	fmt.Fprintf(w, "%s: %d bytes, %d buckets, %d keys read in %s\n", r.Path, r.Size, r.Buckets, r.Keys, r.Took.Round(time.Millisecond))
	if !r.Complete {
		fmt.Fprintln(w, "incomplete: the time bound (--timeout) was reached before every page was read")
	}
	if r.Damaged() {
		fmt.Fprintf(w, "DAMAGED: %d problem(s); quasimd will not start on this file. Salvage it: quasimd db salvage --db %s --to NEW\n", len(r.Problems), r.Path)
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if len(r.Corrupt) > 0 {
		fmt.Fprintf(w, "%d corrupt record(s); listings skip them, salvage leaves them out:\n", len(r.Corrupt))
		for _, c := range r.Corrupt {
			fmt.Fprintf(w, "  %s: %v\n", c.Bucket, c.Err)
		}
	}
	if !r.Damaged() && len(r.Corrupt) == 0 && r.Complete {
		fmt.Fprintln(w, "ok")
	}
}

func printSalvage(w io.Writer, r *store.SalvageReport) {
	fmt.Fprintf(w, "salvaged %s into %s\n", r.From, r.To)
	fmt.Fprintf(w, "%-14s %8s %6s\n", "BUCKET", "COPIED", "LOST")
	buckets := r.Buckets()
	sort.Strings(buckets)
	for _, b := range buckets {
		fmt.Fprintf(w, "%-14s %8d %6d\n", b, r.Copied[b], r.Lost[b])
	}
	if len(r.Corrupt) > 0 {
		fmt.Fprintf(w, "lost records (did not decode):\n")
		for _, c := range r.Corrupt {
			fmt.Fprintf(w, "  %s: %v\n", c.Where, c.Err)
		}
	}
	if len(r.Unreadable) > 0 {
		fmt.Fprintf(w, "unreadable parts of the file (their records are lost and cannot be counted):\n")
		for _, u := range r.Unreadable {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	fmt.Fprintf(w, "next: stop quasimd, move %s aside (keep it), move %s to %s, start quasimd\n", r.From, r.To, r.From)
}
