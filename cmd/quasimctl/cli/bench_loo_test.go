package cli

import "testing"

func TestFamilyGroup(t *testing.T) {
	for space, want := range map[string]string{
		"convolution_RTX_2080_Ti":  "nvidia-turing",
		"gemm_clblast_RTX_3090":    "nvidia-ampere",
		"convolution_milo_A100_T4": "nvidia-ampere",
		"dedispersion_milo_A4000":  "nvidia-ampere",
		"gemm/MI250X":              "amd",
		"hotspot/W6600":            "amd",
		"convolution/A770":         "intel",
		"gemm/H100":                "nvidia-hopper",
		"gemm_unknown_device":      "other",
	} {
		if got := familyGroup(space); got != want {
			t.Errorf("familyGroup(%q) = %q, want %q", space, got, want)
		}
	}
}
