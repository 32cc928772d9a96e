package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/trawlerdev/trawler/internal/crawl"
)

// readRules reads a file of extraction rules: a JSON list of rules, or an object holding them
// under "extract" (a spec's). A field the rules do not know is refused, as the spec's are.
func readRules(path string) ([]crawl.ExtractRule, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("extraction rules: %w", err)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var wrapped struct {
			Extract json.RawMessage `json:"extract"`
		}
		if err := json.Unmarshal(raw, &wrapped); err != nil || wrapped.Extract == nil {
			return nil, fmt.Errorf("%s: want a list of rules, or an object with the list under \"extract\"", path)
		}
		raw = wrapped.Extract
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rules []crawl.ExtractRule
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: something follows the list of rules", path)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s: no rules", path)
	}
	return rules, nil
}
