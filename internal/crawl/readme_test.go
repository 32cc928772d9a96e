package crawl

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The README's crawl that uses the operator's options together is a spec Trawler takes: every
// field known, every value valid.
func TestTheReadmesCombinedSpecIsValid(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "--workflow-id crawl/docs --input '")
	input, _, ok2 := strings.Cut(rest, "'\n")
	if !ok || !ok2 {
		t.Fatal("the README's combined example (crawl/docs) is missing")
	}
	var s Spec
	if err := json.Unmarshal([]byte(input), &s); err != nil {
		t.Fatalf("its JSON: %v", err)
	}
	if err := CheckFields(s.UnknownFields()); err != nil {
		t.Error(err)
	}
	if err := s.WithDefaults().Validate(); err != nil {
		t.Error(err)
	}
	if s.Proxy == "" || !s.Cookies || len(s.AllowPatterns) == 0 || len(s.Headers) == 0 || s.MaxDuration == 0 || s.MaxBytes == 0 ||
		s.AutoThrottle == 0 || s.PolitenessKey != PolitenessDomain || len(s.RobotsOverride) == 0 {
		t.Errorf("the example leaves an option out: %+v", s)
	}
}
