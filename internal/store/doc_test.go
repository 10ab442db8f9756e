package store

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocInSync checks that the bucket tree in doc.go names every bucket
// the code uses and lists every migration.
func TestDocInSync(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, name := range [][]byte{bucketRoot, bucketSpecs, bucketJobs, bucketTrials, bucketTrialSeq, bucketTrialKeys, bucketPolicies, bucketServed, bucketCycles, bucketObservations, bucketCerts, bucketRevocations, bucketJobCerts, bucketSpans, bucketExperiments, bucketZonings, bucketReports, bucketFleet} {
		if !strings.Contains(doc, "── "+string(name)+"/") && !strings.Contains(doc, "//\t"+string(name)+"/") {
			t.Errorf("doc.go: bucket tree lacks %s/", name)
		}
	}
	if !strings.Contains(doc, "── "+string(keyVersion)+" ") {
		t.Errorf("doc.go: bucket tree lacks the %s key", keyVersion)
	}
	if want := fmt.Sprintf("decimal schema version, %q", fmt.Sprint(len(migrations))); !strings.Contains(doc, want) {
		t.Errorf("doc.go: version key not documented as %s", want)
	}
	for _, m := range migrations {
		if !strings.Contains(doc, fmt.Sprintf("//\tversion %d  ", m.version)) {
			t.Errorf("doc.go: migration to version %d not listed under # Schema changes", m.version)
		}
	}
	if strings.Contains(doc, fmt.Sprintf("//\tversion %d  ", len(migrations)+1)) {
		t.Errorf("doc.go: lists a migration to version %d that does not exist", len(migrations)+1)
	}
}
