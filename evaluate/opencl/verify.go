package opencl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// verifyTimeout bounds one answer of a verify socket.
const verifyTimeout = 2 * time.Minute

// verifyRequest is the line a worker sends to Check.Verify: the config
// and, by argument index, a .npy file of each output after its run.
type verifyRequest struct {
	Config  map[string]any    `json:"config"`
	Outputs map[string]string `json:"outputs"`
}

// verifyAnswer is the verify socket's answer.
type verifyAnswer struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// verify asks the process listening at Check.Verify (a Unix socket:
// quasim's Python package serving a Kernel Tuner verify function) whether
// outs are right; "" when they are.
func (w *worker) verify(cfg map[string]any, outs [][]byte) string {
	dir, err := os.MkdirTemp("", "quasim-verify-")
	if err != nil {
		return "verify: " + err.Error()
	}
	defer os.RemoveAll(dir)
	req := verifyRequest{Config: cfg, Outputs: map[string]string{}}
	for i, a := range w.k.Args {
		if !a.Output {
			continue
		}
		b, err := WriteNPY(Array{Type: a.Type, Len: len(outs[i]) / Types[a.Type].Size, Bytes: outs[i]})
		if err != nil {
			return "verify: " + err.Error()
		}
		path := filepath.Join(dir, fmt.Sprintf("out%d.npy", i))
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return "verify: " + err.Error()
		}
		req.Outputs[fmt.Sprint(i)] = path
	}
	conn, err := net.DialTimeout("unix", w.k.Check.Verify, 10*time.Second)
	if err != nil {
		return "verify: " + err.Error()
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(verifyTimeout))
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return "verify: " + err.Error()
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return "verify: no answer: " + err.Error()
	}
	var ans verifyAnswer
	if err := json.Unmarshal(line, &ans); err != nil {
		return fmt.Sprintf("verify: answer %q: %v", line, err)
	}
	if ans.OK {
		return ""
	}
	if ans.Error == "" {
		return "the verify function rejected the output"
	}
	return ans.Error
}
