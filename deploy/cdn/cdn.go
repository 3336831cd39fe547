// Package cdn is boxoffice's reference caching proxy: an nginx configuration (nginx from
// Debian's packages) that shows what any CDN in front of boxoffice must do, and the code
// that renders it and runs nginx as a child process, for the tests that prove the rules
// and for the speed measurement. docs/CDN.md explains the rules; nginx.conf.tmpl is the
// configuration itself.
//
// It is a deployment file with its tests, beside the program rather than part of it:
// nothing of boxoffice imports it, and it imports nothing of boxoffice (its tests
// build the real program through internal/apptest and put nginx in front).
package cdn

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"text/template"
	"time"
)

//go:embed nginx.conf.tmpl
var confText string

var confTemplate = template.Must(template.New("nginx.conf").Parse(confText))

// Config says what the proxy fronts, where it listens and where its files go.
type Config struct {
	// Origin is boxoffice's host:port.
	Origin string
	// Origins, if set, are several boxoffice instances (host:port each) that the proxy
	// balances across, as the load balancer of deploy/cluster; Origin is then unused.
	Origins []string
	// Listen is the proxy's host:port. Start picks a free port on 127.0.0.1 when it is
	// empty.
	Listen string
	// Dir holds the configuration, pid, logs, cache and temporary files, so that nginx
	// needs no folder of the system's and runs as any user.
	Dir string
	// Workers is the number of worker processes (0: one).
	Workers int
	// AccessLog writes Dir/access.log, with each request's cache status.
	AccessLog bool
	// StaticDir, if set, is served under /__static/: the proxy's speed with a plain file,
	// next to its speed with a cached page.
	StaticDir string
	// BackgroundUpdate answers the request that finds an entry expired from the old
	// copy while the refresh runs behind it: what the reference did before, serving a
	// changed page beyond s-maxage. Only the test that shows why not sets it.
	BackgroundUpdate bool
	// User and Group run the workers when nginx starts as root, which would otherwise run
	// them as nobody, who cannot write under Dir. Start sets them to root's own.
	User, Group string
}

// Render writes the nginx configuration for c.
func Render(w io.Writer, c Config) error {
	if (c.Origin == "" && len(c.Origins) == 0) || c.Listen == "" || c.Dir == "" {
		return errors.New("cdn: Origin (or Origins), Listen and Dir are required")
	}
	if !filepath.IsAbs(c.Dir) || (c.StaticDir != "" && !filepath.IsAbs(c.StaticDir)) {
		return errors.New("cdn: Dir and StaticDir must be absolute paths")
	}
	if c.Workers <= 0 {
		c.Workers = 1
	}
	return confTemplate.Execute(w, c)
}

// Upstream is what the proxy forwards to: Origins, or Origin alone.
func (c Config) Upstream() []string {
	if len(c.Origins) > 0 {
		return c.Origins
	}
	return []string{c.Origin}
}

// Nginx finds the nginx program: $BOXOFFICE_NGINX, then PATH, then /usr/sbin/nginx,
// where Debian puts it and where a non-root PATH often does not look.
func Nginx() (string, error) {
	if p := os.Getenv("BOXOFFICE_NGINX"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	const debian = "/usr/sbin/nginx"
	if _, err := os.Stat(debian); err == nil {
		return debian, nil
	}
	return "", errors.New("cdn: nginx not found (Debian package nginx; `.ci/services.sh test` installs it)")
}

// Proxy is a running nginx.
type Proxy struct {
	// URL is the proxy's base URL, e.g. http://127.0.0.1:40123.
	URL string
	// Config is what it was started with (with the port it got).
	Config Config

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // of cmd.Wait, once exited is closed
}

// Start renders the configuration into c.Dir and starts nginx in the foreground, as a
// child that ends with this process. It returns once the proxy accepts connections.
// ctx bounds the start only; Close stops the proxy.
func Start(ctx context.Context, c Config) (*Proxy, error) {
	bin, err := Nginx()
	if err != nil {
		return nil, err
	}
	if c.Dir, err = filepath.Abs(c.Dir); err != nil {
		return nil, err
	}
	for _, d := range []string{"tmp", "cache"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if os.Geteuid() == 0 && c.User == "" {
		c.User, c.Group = rootUser()
	}
	pick := c.Listen == ""
	for attempt := 0; ; attempt++ {
		if pick {
			if c.Listen, err = freeAddr(); err != nil {
				return nil, err
			}
		}
		p, err := start(ctx, bin, c)
		if err == nil {
			return p, nil
		}
		// Another program may take the free port between our look and nginx's bind.
		if !pick || attempt == 4 || !strings.Contains(err.Error(), "Address already in use") {
			return nil, err
		}
	}
}

func start(ctx context.Context, bin string, c Config) (*Proxy, error) {
	var conf bytes.Buffer
	if err := Render(&conf, c); err != nil {
		return nil, err
	}
	confPath := filepath.Join(c.Dir, "nginx.conf")
	if err := os.WriteFile(confPath, conf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	errorLog := filepath.Join(c.Dir, "error.log")
	_ = os.Remove(errorLog)
	out, err := os.Create(filepath.Join(c.Dir, "nginx.out"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	// -e: the log of the start itself, before the configuration is read, which would
	// otherwise go to /var/log/nginx (unwritable for a non-root user).
	cmd := exec.Command(bin, "-p", c.Dir+"/", "-c", confPath, "-e", errorLog, "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = out, out
	// If the test or benchmark dies, the master process is told to stop its workers.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cdn: starting nginx: %w", err)
	}
	p := &Proxy{URL: "http://" + c.Listen, Config: c, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()

	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	retry := time.NewTicker(10 * time.Millisecond)
	defer retry.Stop()
	for {
		conn, err := net.DialTimeout("tcp", c.Listen, time.Second)
		if err == nil {
			conn.Close()
			return p, nil
		}
		select {
		case <-retry.C:
		case <-p.exited:
			return nil, fmt.Errorf("cdn: nginx exited at start (%v): %s", p.err, p.logs())
		case <-deadline.C:
			_ = p.Close()
			return nil, fmt.Errorf("cdn: nginx not accepting on %s after 10s: %s", c.Listen, p.logs())
		case <-ctx.Done():
			_ = p.Close()
			return nil, ctx.Err()
		}
	}
}

// CacheDir is where nginx keeps the cached answers, one file each, headers included.
func (p *Proxy) CacheDir() string { return filepath.Join(p.Config.Dir, "cache") }

// logs returns what nginx said, for error messages.
func (p *Proxy) logs() string {
	var b strings.Builder
	for _, f := range []string{"nginx.out", "error.log"} {
		raw, _ := os.ReadFile(filepath.Join(p.Config.Dir, f))
		b.Write(bytes.TrimSpace(raw))
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// Close stops nginx (its fast shutdown, which closes open streams) and waits for it.
func (p *Proxy) Close() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("cdn: nginx did not stop within 10s; killed: %s", p.logs())
	}
}

// freeAddr returns a loopback address with a port that was free a moment ago (nginx
// cannot listen on port 0 and tell which port it got).
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// rootUser names the user and group this process runs as, for nginx's user directive.
func rootUser() (string, string) {
	u, err := user.Current()
	if err != nil {
		return "root", "root"
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		return u.Username, "root"
	}
	return u.Username, g.Name
}
