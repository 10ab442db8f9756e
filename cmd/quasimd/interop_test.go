package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quasim/quasim/api"
)

// sharedSpaces is the folder of real recorded spaces beside the checkout.
func sharedSpaces(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "spaces"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kernels", "convolution_milo.T1.json")); err != nil {
		t.Skipf("skipping: the shared real spaces are not at %s (%v)", dir, err)
	}
	return dir
}

// TestImportForeignDevice imports a real GPU cache into a T1 kernel (whose
// own job has device class "none"): what import says it stored must be
// listed by trials, kernels and status, exported, kept across a restart,
// and warm-start a later job of the kernel.
func TestImportForeignDevice(t *testing.T) {
	spaces := sharedSpaces(t)
	t1, err := os.ReadFile(filepath.Join(spaces, "kernels", "convolution_milo.T1.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := newDir(t, map[string]string{"convolution_milo.T1.json": string(t1)})
	d := start(t, dir)
	out, errs, code := d.ctl("import", filepath.Join(spaces, "convolution_milo_A100.json.gz"), "--kernel", "convolution_milo")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`: (\d+) stored`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("import said %q", out)
	}
	stored, _ := strconv.Atoi(m[1])
	if stored < 1000 {
		t.Fatalf("import stored %d trials, want the cache's valid configs", stored)
	}
	const device = "nvidia/NVIDIA A100-PCIE-40GB"
	check := func(when string) {
		t.Helper()
		var tr api.Trials
		d.ctlJSON(&tr, "trials", "convolution_milo")
		n := 0
		for _, x := range tr.Trials {
			if x.Device == device {
				n++
			}
		}
		if n != stored {
			t.Errorf("%s: trials lists %d of the %d imported", when, n, stored)
		}
		var ks []api.Kernel
		d.ctlJSON(&ks, "kernels")
		found := false
		for _, k := range ks {
			for _, j := range k.Jobs {
				found = found || (k.Name == "convolution_milo" && j.Device == device && j.Trials == stored && j.Foreign)
			}
		}
		if !found {
			t.Errorf("%s: kernels has no foreign job of %s with %d trials: %+v", when, device, stored, ks)
		}
		var st api.Status
		d.ctlJSON(&st, "status")
		if st.Trials < stored {
			t.Errorf("%s: status counts %d trials, want at least %d", when, st.Trials, stored)
		}
		t4 := filepath.Join(t.TempDir(), "out.json")
		if _, errs, code := d.ctl("export", "convolution_milo", "--device", device, "-o", t4); code != 0 {
			t.Fatalf("%s: export: exit %d: %s", when, code, errs)
		}
		var doc struct{ Results []json.RawMessage }
		data, _ := os.ReadFile(t4)
		if err := json.Unmarshal(data, &doc); err != nil || len(doc.Results) != stored {
			t.Errorf("%s: export wrote %d results (%v), want %d", when, len(doc.Results), err, stored)
		}
	}
	check("after import")
	d.stop()
	d = start(t, dir)
	check("after a restart")
	d.stop()

	// The same kernel with an evaluator on another GPU: its new job
	// warm-starts from the imported A100 trials.
	os.Remove(filepath.Join(dir, "kernels.d", "convolution_milo.T1.json"))
	spec := "name: convolution_milo\nevaluator: replay:" + filepath.Join(spaces, "convolution_milo_A4000.json.gz") +
		"\nproblems: [\"4096,4096\"]\nschedule: \"@every 1h\"\nbudget: {evals: 10}\n"
	if err := os.WriteFile(filepath.Join(dir, "kernels.d", "conv.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	d = start(t, dir)
	waitServedKernel(t, d, "convolution_milo", "4096,4096")
	d.stop()
	if !strings.Contains(d.stderr.String(), `"message":"warm start"`) {
		t.Fatalf("the new job was not warm-started from the import")
	}
	if !strings.Contains(d.stderr.String(), device) {
		t.Errorf("warm start does not name the imported job of %s", device)
	}
}
