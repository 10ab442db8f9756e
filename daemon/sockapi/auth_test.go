package sockapi

import (
	"context"
	"errors"
	"testing"

	"github.com/quasim/quasim/internal/peercred"
)

// Host names are case-insensitive.
func TestValidHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"quasimd", true}, {"QUASIMD", true}, {"QuasimD:80", true}, {"LOCALHOST", true},
		{"127.0.0.1:8080", true}, {"evil.example", false}, {"quasimd.evil", false}, {"", false},
	}
	for _, tt := range tests {
		if got := validHost(tt.host); got != tt.want {
			t.Errorf("validHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestWriters(t *testing.T) {
	w := NewWriters([]uint32{1001}, "quasim")
	w.Self = 500
	w.groupID = func(name string) (string, error) {
		if name == "quasim" {
			return "777", nil
		}
		return "", errors.New("no group")
	}
	w.groupsOf = func(uid uint32) ([]string, error) {
		if uid == 1003 {
			return []string{"100", "777"}, nil
		}
		return []string{"100"}, nil
	}
	tests := []struct {
		name string
		cred *peercred.Cred
		want bool
	}{
		{"no credentials", nil, false},
		{"root", &peercred.Cred{UID: 0, GID: 0}, true},
		{"daemon's uid", &peercred.Cred{UID: 500, GID: 100}, true},
		{"operator", &peercred.Cred{UID: 1001, GID: 100}, true},
		{"primary group quasim", &peercred.Cred{UID: 1002, GID: 777}, true},
		{"member of quasim", &peercred.Cred{UID: 1003, GID: 100}, true},
		{"anyone else", &peercred.Cred{UID: 1004, GID: 100}, false},
	}
	for _, tt := range tests {
		ctx := context.Background()
		if tt.cred != nil {
			ctx = WithPeer(ctx, *tt.cred)
		}
		if got := w.allowed(ctx); got != tt.want {
			t.Errorf("allowed(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
