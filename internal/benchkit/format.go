package benchkit

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"boxoffice/internal/ticker"
)

// Thousands writes v with commas between the thousands ("50,000"), a fraction below
// 100 with up to two decimals ("2.5"), and a minus sign (−) before a negative.
func Thousands[T int | int64 | float64](n T) string {
	v := float64(n)
	if v != math.Trunc(v) && math.Abs(v) < 100 {
		return strconv.FormatFloat(v, 'f', decimals(v), 64)
	}
	s := strconv.FormatInt(int64(math.Round(math.Abs(v))), 10)
	var b strings.Builder
	if v < 0 {
		b.WriteString("−")
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// decimals is how many decimals v needs, up to two.
func decimals(v float64) int {
	for d := 0; d < 2; d++ {
		p := math.Pow(10, float64(d))
		if math.Abs(v*p-math.Round(v*p)) < 1e-9 {
			return d
		}
	}
	return 2
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Share is part of whole as a percentage with a decimal ("12.5 %"), or "–" of
// nothing.
func Share[T int | int64](part, whole T) string {
	if whole <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(part)/float64(whole))
}

// Revision names the code measured: the commit, and whether tracked files differ
// from it (others may edit the same working tree).
func Revision(ctx context.Context) string {
	head, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(head))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		if n := strings.Count(string(st), "\n"); n > 0 {
			rev += fmt.Sprintf(" + uncommitted changes to %d tracked files", n)
		}
	}
	return rev
}

// LoadAverage is the machine's 1, 5 and 15 minute load averages, or "n/a".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// ToolVersion is the first line of a program's answer to `--version`, or says that it
// is not on PATH.
func ToolVersion(ctx context.Context, program string) string {
	out, err := exec.CommandContext(ctx, program, "--version").Output()
	if err != nil {
		return program + " not found on PATH"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// WriteFile creates path and writes it with write.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Sleep waits d or until ctx ends, and reports whether ctx is still alive. A
// measurement's windows and a simulated person's pauses are times on the clock, not
// events to wait for.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Every is ticker.Every for the commands, which import only the bench kit: f at every
// tick of a d ticker until ctx ends, an overrunning call followed at once by the next.
func Every(ctx context.Context, d time.Duration, f func()) { ticker.Every(ctx, d, f) }

// SleepUntil waits for the clock to reach t (Sleep).
func SleepUntil(ctx context.Context, t time.Time) bool { return Sleep(ctx, time.Until(t)) }
