package daemon

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/quasim/quasim/api"
)

// fleetCollector reports the fleet status (GET /v1/fleet) at scrape time.
type fleetCollector struct {
	srv *server
}

var (
	descFleetConnected = prometheus.NewDesc("quasim_fleet_connected", "1 while connected to a NATS server of the fleet, else 0.", nil, nil)
	descFleetPeers     = prometheus.NewDesc("quasim_fleet_peers", "Other nodes whose records this node holds.", nil, nil)
	descFleetReceived  = prometheus.NewDesc("quasim_fleet_configs_received", "Trusted live fleet offers held.", nil, nil)
	descFleetServed    = prometheus.NewDesc("quasim_fleet_served_jobs", "Jobs whose last answer came from the fleet.", nil, nil)
	descFleetVerified  = prometheus.NewDesc("quasim_fleet_verifications_total", "Local verifications of fleet configs, by result: passed (at their own job, or at a problem they answered as the nearest) or failed (at their own job).", []string{"result"}, nil)
	descFleetRejected  = prometheus.NewDesc("quasim_fleet_records_rejected_total", "Fleet records left out, by reason: untrusted, tampered, malformed, not_passed.", []string{"reason"}, nil)
	descFleetPublished = prometheus.NewDesc("quasim_fleet_published_total", "Records the fleet took from this node.", nil, nil)
	descFleetWaiting   = prometheus.NewDesc("quasim_fleet_waiting", "Records waiting to be published.", nil, nil)
)

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFleetConnected, descFleetPeers, descFleetReceived, descFleetServed,
		descFleetVerified, descFleetRejected, descFleetPublished, descFleetWaiting} {
		ch <- d
	}
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	v, _ := c.srv.getFleet(nil)
	st := v.(api.FleetStatus)
	gauge := func(d *prometheus.Desc, x int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(x), labels...)
	}
	counter := func(d *prometheus.Desc, x int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(x), labels...)
	}
	connected := 0
	if st.Connected {
		connected = 1
	}
	gauge(descFleetConnected, connected)
	gauge(descFleetPeers, st.Peers)
	gauge(descFleetReceived, st.Received)
	gauge(descFleetServed, st.ServedFromFleet)
	counter(descFleetVerified, st.Verified, "passed")
	counter(descFleetVerified, st.VerifyFailures, "failed")
	for _, reason := range []string{"untrusted", "tampered", "malformed", "not_passed"} {
		counter(descFleetRejected, st.Rejected[reason], reason)
	}
	counter(descFleetPublished, st.Published)
	gauge(descFleetWaiting, st.Waiting)
}
