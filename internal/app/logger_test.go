package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"boxoffice/internal/config"
)

// TestNewLoggerLevel: the logger writes from cfg.LogLevel up: a debug line only at
// LOG_LEVEL=debug, an info line at the default and not at warn.
func TestNewLoggerLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level       slog.Level
		debug, info bool
	}{
		{slog.LevelInfo, false, true},
		{slog.LevelDebug, true, true},
		{slog.LevelWarn, false, false},
	} {
		for _, format := range []string{"json", "text"} {
			var out bytes.Buffer
			log := NewLogger(config.Config{LogFormat: format, LogLevel: tc.level}, &out)
			log.Debug("a debug line")
			log.Info("an info line")
			if got := strings.Contains(out.String(), "a debug line"); got != tc.debug {
				t.Errorf("%s at %v: debug line written %v, want %v", format, tc.level, got, tc.debug)
			}
			if got := strings.Contains(out.String(), "an info line"); got != tc.info {
				t.Errorf("%s at %v: info line written %v, want %v", format, tc.level, got, tc.info)
			}
		}
	}
}
