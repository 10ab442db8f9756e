package introspect

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"strings"
)

// CPU is what the OS says of the machine's processors.
type CPU struct {
	Model    string   `json:"model"`
	Vendor   string   `json:"vendor"`
	Arch     string   `json:"arch"`
	Threads  int      `json:"threads"`           // logical CPUs
	Cores    int      `json:"cores,omitempty"`   // physical cores; 0 when the OS does not say
	Sockets  int      `json:"sockets,omitempty"` // 0 when the OS does not say
	Features []string `json:"features"`          // the vector features kernels care about, present here
	MHz      float64  `json:"mhz,omitempty"`     // mean current frequency; 0 when unknown
	MaxMHz   float64  `json:"max_mhz,omitempty"` // from cpufreq; 0 when unknown
	// Energy names the energy counter measurements can read, or says why
	// there is none ("unavailable: ...").
	Energy string `json:"energy"`
}

// vectorFeatures are the /proc/cpuinfo flags reported, widest last.
var vectorFeatures = []string{"sse4_2", "fma", "avx", "avx2", "avx512f", "avx512_bf16", "amx_tile", "asimd", "sve", "sve2"}

// ReadCPU reads /proc/cpuinfo, cpufreq and the powercap tree from fsys,
// the root of the file system (os.DirFS("/")).
func ReadCPU(fsys fs.FS) (CPU, error) {
	c := CPU{Arch: runtime.GOARCH, Features: []string{}}
	data, err := fs.ReadFile(fsys, "proc/cpuinfo")
	if err != nil {
		return c, fmt.Errorf("cpu: %w", err)
	}
	cores := map[string]bool{}
	sockets := map[string]bool{}
	var mhz []float64
	flags := map[string]bool{}
	phys := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			c.Threads++
		case "model name", "Model", "cpu model":
			if c.Model == "" {
				c.Model = v
			}
		case "vendor_id", "CPU implementer":
			if c.Vendor == "" {
				c.Vendor = v
			}
		case "physical id":
			phys = v
			sockets[v] = true
		case "core id":
			cores[phys+"/"+v] = true
		case "cpu MHz":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				mhz = append(mhz, f)
			}
		case "flags", "Features":
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
		}
	}
	if c.Threads == 0 {
		return c, fmt.Errorf("cpu: proc/cpuinfo lists no processor")
	}
	c.Cores, c.Sockets = len(cores), len(sockets)
	for _, f := range vectorFeatures {
		if flags[f] {
			c.Features = append(c.Features, f)
		}
	}
	if len(mhz) > 0 {
		s := 0.0
		for _, f := range mhz {
			s += f
		}
		c.MHz = s / float64(len(mhz))
	}
	if b, err := fs.ReadFile(fsys, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
			c.MaxMHz = khz / 1000
		}
	}
	c.Energy = rapl(fsys)
	return c, nil
}

// rapl says where the CPU's energy is read, or why it cannot be.
func rapl(fsys fs.FS) string {
	zones, err := packageZones(fsys)
	if err != nil {
		return "unavailable: " + err.Error()
	}
	for i, z := range zones {
		zones[i] = "/" + z + "/energy_uj"
	}
	return "rapl: " + strings.Join(zones, ", ")
}

// Class is the CPU's device class, cpu/<model>/<widest vector feature>/<N>c
// (N logical CPUs): results transfer between machines of the same class.
func (c CPU) Class() string {
	feat := "novec"
	if n := len(c.Features); n > 0 {
		feat = c.Features[n-1] // vectorFeatures lists the widest last
	}
	model := strings.Join(strings.Fields(strings.ReplaceAll(c.Model, "/", "-")), " ")
	if model == "" {
		model = "unknown " + c.Arch
	}
	return fmt.Sprintf("cpu/%s/%s/%dc", model, feat, c.Threads)
}
