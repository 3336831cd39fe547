package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/stat and /proc/<pid>/stat.
const clockTicks = 100

// cpuUse is where the machine's CPU went during a measured window, in cores (1.0 = one
// core busy the whole window).
type cpuUse struct {
	OK       bool
	Machine  float64 // the whole machine
	Process  float64 // holdbench itself: the HTTP clients and the server
	Backends float64 // the PostgreSQL backends of the measured connections
	Pgbench  float64 // the pgbench process
	PGAux    float64 // PostgreSQL's own processes: WAL writer, checkpointer, autovacuum, ...
	Redis    float64 // redis-server
	OtherPG  float64 // other PostgreSQL backends: other databases' (tests running alongside), the setup's
}

// Rest is what no meter saw: the kernel, other programs, processes that came and went.
func (c cpuUse) Rest() float64 {
	return max(0, c.Machine-c.Process-c.Backends-c.Pgbench-c.PGAux-c.Redis-c.OtherPG)
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

// processCPU is the user and system time of this process so far.
func processCPU() time.Duration {
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

// cpuMeter measures a window's CPU use. Processes that exit take their counters with
// them (pgbench's backends do, at the end), so it samples every 200 ms and keeps the
// last value seen of each process.
type cpuMeter struct {
	srv      *server
	app      string // application_name of the measured backends
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

func startCPUMeter(ctx context.Context, srv *server, app string) *cpuMeter {
	m := &cpuMeter{srv: srv, app: app, at: time.Now(), proc0: processCPU(),
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

// scan classifies the processes not seen before; measured backends are looked up in
// pg_stat_activity, since their process titles do not name the application.
func (m *cpuMeter) scan(ctx context.Context, first bool) {
	measured := map[int]bool{}
	if pids, err := m.srv.backendPIDs(ctx, m.app); err == nil {
		for _, p := range pids {
			measured[p] = true
		}
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

func (m *cpuMeter) sample() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p := range m.last {
		if t, ok := pidTicks(p); ok {
			m.last[p] = t
		}
	}
}

// stop ends the window; pgbench is the CPU time pgbench used in it, if it ran.
func (m *cpuMeter) stop(pgbench time.Duration) cpuUse {
	close(m.stopping)
	<-m.done
	secs := time.Since(m.at).Seconds()
	busy1, total1, err := machineTicks()
	u := cpuUse{
		OK:      m.machine == nil && err == nil && total1 > m.total0,
		Process: (processCPU() - m.proc0).Seconds() / secs,
		Pgbench: pgbench.Seconds() / secs,
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

// window measures what happens between from and to while the load runs: CPU use, an
// optional CPU profile, and the round trips counted by the tracer.
type window struct {
	done    chan struct{}
	cpu     cpuUse
	queries *queryReport
	err     error
}

func startWindow(ctx context.Context, srv *server, opts options, profileSuffix string, from, to time.Time) *window {
	w := &window{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		if !sleepUntil(ctx, from) {
			w.err = ctx.Err()
			return
		}
		meter := startCPUMeter(ctx, srv, serverApp)
		snap0 := srv.trace.snapshot()
		var prof *os.File
		if opts.cpuProfile != "" {
			var err error
			if prof, err = os.Create(opts.cpuProfile + profileSuffix + ".pprof"); err != nil {
				w.err = err
			} else if err := pprof.StartCPUProfile(prof); err != nil {
				w.err = err
				prof.Close()
				prof = nil
			}
		}
		sleepUntil(ctx, to)
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
		w.queries = srv.trace.snapshot().since(snap0)
		w.cpu = meter.stop(0)
	}()
	return w
}

// finish waits for the window to end and returns what it measured.
func (w *window) finish() (cpuUse, *queryReport, error) {
	<-w.done
	return w.cpu, w.queries, w.err
}

// sleepUntil waits for the clock to reach t; false if ctx ended first. The benchmark's
// windows are times on the clock, not events to wait for.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
