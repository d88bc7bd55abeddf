package memory

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"alice", true},
		{"user.name_1-2", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../etc", false},
		{"a/b", false},
		{`a\b`, false},
		{"a b", false},
		{"名字", false},
		{"a\x00", false},
		{"\xff", false},
	}
	for _, tt := range tests {
		err := ValidateID("user_id", tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("ValidateID(%q) error %v is not ErrInvalidInput", tt.id, err)
			}
			if !strings.HasPrefix(err.Error(), "user_id") {
				t.Errorf("ValidateID(%q) error %q does not name the field", tt.id, err)
			}
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2024-05-08T13:56:00Z", time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC), true},
		{"2024-05-08T15:56:00+02:00", time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC), true},
		{"2024-05-08 13:56:00", time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC), true},
		{"2024-05-08T13:56:00.123Z", time.Date(2024, 5, 8, 13, 56, 0, 123e6, time.UTC), true},
		{"yesterday", time.Time{}, false},
		{"3000-01-01T00:00:00Z", time.Time{}, false},
		{"1800-01-01 00:00:00", time.Time{}, false},
		{"2024-13-01 00:00:00", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseTimestamp(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && !got.Equal(tt.want) {
			t.Errorf("ParseTimestamp(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	tests := []struct {
		name    string
		mutate  func(*Config)
		setting string
	}{
		{"debounce low", func(c *Config) { c.DebounceSeconds = 0 }, "debounce_seconds"},
		{"debounce high", func(c *Config) { c.DebounceSeconds = 301 }, "debounce_seconds"},
		{"tokens", func(c *Config) { c.MaxInjectionTokens = 99 }, "max_injection_tokens"},
		{"threshold", func(c *Config) { c.FactConfidenceThreshold = 1.5 }, "fact_confidence_threshold"},
		{"user", func(c *Config) { c.UserID = "../x" }, "user_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.setting)
			}
		})
	}
}
