package daemon

import "testing"

// Under systemd the defaults follow the directories the unit asked for, and
// the user defaults ($XDG_RUNTIME_DIR, the temp dir) do not apply.
func TestDefaultsUnderSystemd(t *testing.T) {
	tests := []struct {
		name, runtime, state, conf string
		socket, locks, stateDir    string
		kernels                    string
	}{
		{"two runtime dirs", "/run/quasim:/run/lock/quasim", "/var/lib/quasim", "/etc/quasim",
			"/run/quasim/quasimd.sock", "/run/lock/quasim", "/var/lib/quasim", "/etc/quasim/kernels.d"},
		{"one runtime dir", "/run/q/", "/s1:/s2", "",
			"/run/q/quasimd.sock", "/run/q/locks", "/s1", DefaultKernelsDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", "/xdg")
			t.Setenv("XDG_STATE_HOME", "/xdgstate")
			t.Setenv("RUNTIME_DIRECTORY", tt.runtime)
			t.Setenv("STATE_DIRECTORY", tt.state)
			t.Setenv("CONFIGURATION_DIRECTORY", tt.conf)
			for _, c := range []struct{ fn, got, want string }{
				{"DefaultSocket", DefaultSocket(), tt.socket},
				{"DefaultLockDir", DefaultLockDir(), tt.locks},
				{"DefaultStateDir", DefaultStateDir(), tt.stateDir},
				{"DefaultKernels", DefaultKernels(), tt.kernels},
			} {
				if c.got != c.want {
					t.Errorf("%s() = %q, want %q", c.fn, c.got, c.want)
				}
			}
		})
	}
}
