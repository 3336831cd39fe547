// Command lbconf writes the reference nginx configuration (deploy/cdn) as the load
// balancer and cache of deploy/cluster: one listener in front of several boxoffice
// instances. It prepares the folders nginx writes to and prints the configuration's
// path; cluster.sh starts nginx with it.
//
//	lbconf -listen 10.77.0.40:8080 -dir /abs/dir 10.77.0.31:8080 10.77.0.32:8080 …
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"boxoffice/deploy/cdn"
)

func main() {
	listen := flag.String("listen", "", "where nginx listens, host:port")
	dir := flag.String("dir", "", "nginx's folder (absolute): configuration, logs, cache")
	user := flag.String("user", "", "user (and group of the same name) the workers run as, when started as root")
	flag.Parse()
	c := cdn.Config{Listen: *listen, Dir: *dir, Origins: flag.Args(), Workers: 1, AccessLog: true}
	if *user != "" {
		c.User, c.Group = *user, *user
	}
	if err := write(c); err != nil {
		fmt.Fprintln(os.Stderr, "lbconf:", err)
		os.Exit(1)
	}
}

func write(c cdn.Config) error {
	var conf bytes.Buffer
	if err := cdn.Render(&conf, c); err != nil {
		return err
	}
	for _, d := range []string{"tmp", "cache"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d), 0o755); err != nil {
			return err
		}
	}
	path := filepath.Join(c.Dir, "nginx.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
