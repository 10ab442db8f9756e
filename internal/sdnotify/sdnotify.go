package sdnotify

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Notifier sends state to one notify socket.
type Notifier struct {
	socket string // "" disables
}

// New returns a notifier for socket, the value of $NOTIFY_SOCKET; an empty
// socket gives a notifier that does nothing.
func New(socket string) *Notifier { return &Notifier{socket: socket} }

// Enabled reports whether a notify socket is set.
func (n *Notifier) Enabled() bool { return n.socket != "" }

// Ready sends READY=1.
func (n *Notifier) Ready() error { return n.send("READY=1") }

// Stopping sends STOPPING=1.
func (n *Notifier) Stopping() error { return n.send("STOPPING=1") }

// Watchdog sends WATCHDOG=1.
func (n *Notifier) Watchdog() error { return n.send("WATCHDOG=1") }

// Status sends a free-form STATUS= line shown by systemctl status.
func (n *Notifier) Status(s string) error {
	return n.send("STATUS=" + strings.ReplaceAll(s, "\n", " "))
}

func (n *Notifier) send(state string) error {
	if n.socket == "" {
		return nil
	}
	addr := n.socket
	if strings.HasPrefix(addr, "@") { // abstract namespace
		addr = "\x00" + addr[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.socket, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.socket, err)
	}
	return nil
}

// WatchdogInterval reads $WATCHDOG_USEC (as passed in usec, for pid) and
// returns half of it, the interval at which to ping; zero when the
// watchdog is off or meant for another process.
func WatchdogInterval(usec, watchdogPID string, pid int) time.Duration {
	if usec == "" {
		return 0
	}
	if watchdogPID != "" && watchdogPID != strconv.Itoa(pid) {
		return 0
	}
	us, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || us <= 0 {
		return 0
	}
	return time.Duration(us) * time.Microsecond / 2
}
