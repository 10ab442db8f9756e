//go:build cgo

package daemon

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/quasim/quasim/introspect"
)

func TestDeviceGauges(t *testing.T) {
	dev := &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-abc", nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetArchitectureFunc:          func() (nvml.DeviceArchitecture, nvml.Return) { return nvml.DEVICE_ARCH_HOPPER, nvml.SUCCESS },
		GetMemoryInfoFunc:            func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 80 << 30}, nvml.SUCCESS },
		GetPowerManagementLimitFunc:  func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS },
		GetPowerManagementLimitConstraintsFunc: func() (uint32, uint32, nvml.Return) {
			return 200000, 700000, nvml.SUCCESS
		},
		GetPowerUsageFunc:             func() (uint32, nvml.Return) { return 412500, nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) { return 987654321, nvml.SUCCESS },
		GetTemperatureFunc:            func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 64, nvml.SUCCESS },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 1980, nvml.SUCCESS
			}
			return 2619, nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 88}, nvml.SUCCESS },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) {
			return 0, nvml.ERROR_NOT_SUPPORTED // left out, not reported as 0
		},
	}
	gpus, err := introspect.NewGPUs(&mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "560.35.03", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 12060, nvml.SUCCESS },
		DeviceGetCountFunc:             func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		DeviceGetHandleByIndexFunc:     func(int) (nvml.Device, nvml.Return) { return dev, nvml.SUCCESS },
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(newDeviceCollector(gpus, nil, nil))
	labels := `{UUID="GPU-abc",class="nvidia/NVIDIA H100 80GB HBM3/sm90/driver-560",device="nvidia0",gpu="0",modelName="NVIDIA H100 80GB HBM3"}`
	want := `
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature, C.
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP` + labels + ` 64
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilisation, %.
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL` + labels + ` 88
# HELP DCGM_FI_DEV_MEM_CLOCK GPU memory clock, MHz.
# TYPE DCGM_FI_DEV_MEM_CLOCK gauge
DCGM_FI_DEV_MEM_CLOCK` + labels + ` 2619
# HELP DCGM_FI_DEV_POWER_USAGE GPU power draw, W.
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE` + labels + ` 412.5
# HELP DCGM_FI_DEV_SM_CLOCK GPU SM clock, MHz.
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK` + labels + ` 1980
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION GPU energy used since the driver loaded, mJ (a counter).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` + labels + ` 9.87654321e+08
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
