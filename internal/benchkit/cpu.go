package benchkit

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/stat and /proc/<pid>/stat.
const clockTicks = 100

// CPUUse is where the machine's CPU went during a measured window, in cores (1.0 = one
// core busy the whole window).
type CPUUse struct {
	OK       bool
	Machine  float64 // the whole machine
	Process  float64 // this process: the load's clients and the program serving them
	Backends float64 // the PostgreSQL backends of the measured connections
	Child    float64 // a program the measurement ran in the window (pgbench)
	PGAux    float64 // PostgreSQL's own processes: WAL writer, checkpointer, autovacuum, ...
	Redis    float64 // redis-server
	OtherPG  float64 // other PostgreSQL backends: other databases' (tests running alongside), the setup's
}

// Rest is what no meter saw: the kernel, other programs, processes that came and went.
func (c CPUUse) Rest() float64 {
	return max(0, c.Machine-c.Process-c.Backends-c.Child-c.PGAux-c.Redis-c.OtherPG)
}

// machineTicks reads the busy and total ticks of all CPUs from /proc/stat.
func machineTicks() (busy, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: unexpected %q", line)
	}
	for i, s := range f[1:] {
		n, _ := strconv.ParseUint(s, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, nil
}

// ProcessCPU is the user and system time of this process so far.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pidTicks is the user and system ticks of one process so far.
func pidTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return u + st, true
}

// CPUMeter measures a window's CPU use. Processes that exit take their counters with
// them (pgbench's backends do, at the end), so it samples every 200 ms and keeps the
// last value seen of each process.
type CPUMeter struct {
	measured func(context.Context) []int
	at       time.Time
	busy0    uint64
	total0   uint64
	machine  error
	proc0    time.Duration
	mu       sync.Mutex
	class    map[int]string // pid -> what it is; "" for processes not followed
	base     map[int]uint64 // ticks at the start, for processes already there
	last     map[int]uint64
	stopping chan struct{}
	done     chan struct{}
}

const (
	classBackend = "backend"
	classPGAux   = "pgaux"
	classOtherPG = "otherpg"
	classRedis   = "redis"
)

// StartCPUMeter starts measuring; measured lists the process ids of the PostgreSQL
// backends the window measures (their process titles do not say).
func StartCPUMeter(ctx context.Context, measured func(context.Context) []int) *CPUMeter {
	m := &CPUMeter{measured: measured, at: time.Now(), proc0: ProcessCPU(),
		class: map[int]string{}, base: map[int]uint64{}, last: map[int]uint64{},
		stopping: make(chan struct{}), done: make(chan struct{})}
	m.busy0, m.total0, m.machine = machineTicks()
	m.scan(ctx, true)
	go func() {
		defer close(m.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-m.stopping:
				m.sample()
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if n%3 == 0 { // new processes are looked for every 0.6 s
				m.scan(ctx, false)
			}
			m.sample()
		}
	}()
	return m
}

// scan classifies the processes not seen before.
func (m *CPUMeter) scan(ctx context.Context, first bool) {
	measured := map[int]bool{}
	for _, p := range m.measured(ctx) {
		measured[p] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if c, seen := m.class[pid]; seen && !(c == classOtherPG && measured[pid]) {
			continue
		}
		c := classify(pid, measured[pid])
		m.class[pid] = c
		if c == "" {
			continue
		}
		t, ok := pidTicks(pid)
		if !ok {
			continue
		}
		if first {
			m.base[pid] = t
		}
		m.last[pid] = t
	}
}

// classify tells what a process is from its command line.
func classify(pid int, measured bool) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return "" // a kernel thread, or gone
	}
	cmd := string(b)
	switch {
	case measured:
		return classBackend
	case strings.HasPrefix(cmd, "postgres: ") && (strings.Contains(cmd, "(") || strings.Contains(cmd, "[local]")):
		return classOtherPG
	case strings.HasPrefix(cmd, "postgres: ") || strings.HasSuffix(strings.SplitN(cmd, "\x00", 2)[0], "/postgres"):
		return classPGAux
	case strings.HasPrefix(cmd, "redis-server"):
		return classRedis
	}
	return ""
}

func (m *CPUMeter) sample() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.last {
		if t, ok := pidTicks(p); ok {
			m.last[p] = t
		}
	}
}

// Stop ends the window; child is the CPU time a program the measurement ran used in
// it (0: none).
func (m *CPUMeter) Stop(child time.Duration) CPUUse {
	close(m.stopping)
	<-m.done
	secs := time.Since(m.at).Seconds()
	busy1, total1, err := machineTicks()
	u := CPUUse{
		OK:      m.machine == nil && err == nil && total1 > m.total0,
		Process: (ProcessCPU() - m.proc0).Seconds() / secs,
		Child:   child.Seconds() / secs,
	}
	if u.OK {
		u.Machine = float64(busy1-m.busy0) / float64(total1-m.total0) * float64(runtime.NumCPU())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, t := range m.last {
		v := float64(t-min(t, m.base[p])) / clockTicks / secs
		switch m.class[p] {
		case classBackend:
			u.Backends += v
		case classPGAux:
			u.PGAux += v
		case classOtherPG:
			u.OtherPG += v
		case classRedis:
			u.Redis += v
		}
	}
	return u
}

// Memory is this process's live Go heap and goroutine stacks, after a collection, and
// its resident set.
func Memory() (heap, stacks, rss int64) {
	// Two collections empty the sync.Pools (net/http keeps its buffers there) that an
	// earlier measurement filled; FreeOSMemory then hands free pages back, so RSS
	// means use.
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	heap, stacks = int64(m.HeapAlloc), int64(m.StackInuse) // live objects: spans left by an earlier side do not hide them
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				rss = kb * 1024
			}
		}
	}
	return heap, stacks, rss
}

// RaiseFileLimit lifts the open-file limit to its hard limit: a loopback connection
// is a descriptor at each end, and a measurement opens thousands.
func RaiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
