package daemon

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quasim/quasim/introspect"
)

// deviceCollector samples the devices at scrape time: GPUs through NVML,
// under the names NVIDIA's dcgm-exporter uses (so dashboards built for it
// work), the CPU packages' RAPL energy where readable, and the CPU load of
// other processes the idle gate sees.
type deviceCollector struct {
	gpus *introspect.GPUs // nil without NVML
	gate *idleGate

	mu     sync.Mutex
	rapl   *introspect.RAPL // nil when unreadable
	raplAt []int64          // the counters at the last read
	raplMJ float64
}

var gpuLabels = []string{"gpu", "UUID", "device", "modelName", "class"}

var (
	descPower  = prometheus.NewDesc("DCGM_FI_DEV_POWER_USAGE", "GPU power draw, W.", gpuLabels, nil)
	descEnergy = prometheus.NewDesc("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
		"GPU energy used since the driver loaded, mJ (a counter).", gpuLabels, nil)
	descTemp     = prometheus.NewDesc("DCGM_FI_DEV_GPU_TEMP", "GPU temperature, C.", gpuLabels, nil)
	descSMClock  = prometheus.NewDesc("DCGM_FI_DEV_SM_CLOCK", "GPU SM clock, MHz.", gpuLabels, nil)
	descMemClock = prometheus.NewDesc("DCGM_FI_DEV_MEM_CLOCK", "GPU memory clock, MHz.", gpuLabels, nil)
	descUtil     = prometheus.NewDesc("DCGM_FI_DEV_GPU_UTIL", "GPU utilisation, %.", gpuLabels, nil)
	descThrottle = prometheus.NewDesc("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
		"GPU clock-event (throttle) reasons, NVML's bit mask.", gpuLabels, nil)
	descCPUEnergy = prometheus.NewDesc("quasim_cpu_energy_millijoules_total",
		"Energy of the CPU packages from RAPL since quasimd started, mJ; absent where RAPL is not readable.", nil, nil)
	descCPULoad = prometheus.NewDesc("quasim_cpu_load_others",
		"Share of all CPUs (0-1) used by processes outside quasimd over the last second, as the idle gate sees it.", nil, nil)
)

// newDeviceCollector starts the RAPL counter, when there is one, from now.
func newDeviceCollector(gpus *introspect.GPUs, rapl *introspect.RAPL, gate *idleGate) *deviceCollector {
	c := &deviceCollector{gpus: gpus, rapl: rapl, gate: gate}
	if rapl != nil {
		c.raplAt = rapl.Read()
	}
	return c
}

func (c *deviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPower, descEnergy, descTemp, descSMClock, descMemClock, descUtil, descThrottle, descCPUEnergy, descCPULoad} {
		ch <- d
	}
}

func (c *deviceCollector) Collect(ch chan<- prometheus.Metric) {
	if c.gpus != nil {
		info := c.gpus.Info()
		for i, g := range info.GPUs {
			s := c.gpus.Sample(i)
			labels := []string{strconv.Itoa(g.Index), g.UUID, "nvidia" + strconv.Itoa(g.Index), g.Name, info.Class(g)}
			missing := map[string]bool{}
			for _, m := range s.Missing {
				missing[m] = true
			}
			for _, v := range []struct {
				what string
				desc *prometheus.Desc
				typ  prometheus.ValueType
				val  float64
			}{
				{"power", descPower, prometheus.GaugeValue, float64(s.PowerMW) / 1000},
				{"energy", descEnergy, prometheus.CounterValue, float64(s.EnergyMJ)},
				{"temperature", descTemp, prometheus.GaugeValue, float64(s.TemperatureC)},
				{"sm_clock", descSMClock, prometheus.GaugeValue, float64(s.SMClockMHz)},
				{"mem_clock", descMemClock, prometheus.GaugeValue, float64(s.MemClockMHz)},
				{"utilization", descUtil, prometheus.GaugeValue, float64(s.UtilGPU)},
				{"throttle_reasons", descThrottle, prometheus.GaugeValue, float64(s.ThrottleBits)},
			} {
				if !missing[v.what] { // a reading NVML did not give is left out, not zero
					ch <- prometheus.MustNewConstMetric(v.desc, v.typ, v.val, labels...)
				}
			}
		}
	}
	if mj, ok := c.cpuEnergy(); ok {
		ch <- prometheus.MustNewConstMetric(descCPUEnergy, prometheus.CounterValue, mj)
	}
	if c.gate != nil {
		if load, ok := c.gate.current(); ok {
			ch <- prometheus.MustNewConstMetric(descCPULoad, prometheus.GaugeValue, load)
		}
	}
}

// cpuEnergy adds the RAPL energy since the last call to the total and
// returns it; false without RAPL.
func (c *deviceCollector) cpuEnergy() (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rapl == nil {
		return 0, false
	}
	mj, now := c.rapl.Since(c.raplAt)
	c.raplMJ, c.raplAt = c.raplMJ+mj, now
	return c.raplMJ, true
}

// run reads the RAPL counters every so often between scrapes: a window
// counts one wraparound per counter at most, and a package counter wraps
// in some minutes under load.
func (c *deviceCollector) run(ctx context.Context, every time.Duration) {
	if c.rapl == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.cpuEnergy()
		}
	}
}
