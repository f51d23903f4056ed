// Package sampleapp is a small HTTP server used as a sample application and
// by tests that need real pods whose readiness and exit they control through
// the environment (cmd/dc-sample-app, image deployconfig/sample-app).
package sampleapp

import (
	"fmt"
	"strconv"
	"time"
)

// Config is what the environment asks of the server.
type Config struct {
	// Port is the TCP port to listen on ($PORT, default 8080).
	Port int
	// Message starts the answer of GET / ($MESSAGE, default "hello").
	Message string
	// Version ends the answer of GET / ($VERSION).
	Version string
	// Ready is false when the server must never become ready ($READY,
	// default true).
	Ready bool
	// ReadyAfter is how long after start /readyz starts answering 200
	// ($READY_AFTER, a Go duration).
	ReadyAfter time.Duration
	// ExitAfter, when positive, makes the process exit that long after
	// start ($EXIT_AFTER, a Go duration) with ExitCode ($EXIT_CODE,
	// default 0).
	ExitAfter time.Duration
	ExitCode  int
}

// ParseConfig reads the Config from the environment through getenv. An
// invalid value is an error naming the variable and what was expected.
func ParseConfig(getenv func(string) string) (Config, error) {
	c := Config{Port: 8080, Message: "hello", Ready: true, Version: getenv("VERSION")}
	if m := getenv("MESSAGE"); m != "" {
		c.Message = m
	}
	var err error
	if c.Port, err = parseInt(getenv, "PORT", c.Port, 1, 65535); err != nil {
		return Config{}, err
	}
	if c.ExitCode, err = parseInt(getenv, "EXIT_CODE", 0, 0, 255); err != nil {
		return Config{}, err
	}
	if v := getenv("READY"); v != "" {
		if c.Ready, err = strconv.ParseBool(v); err != nil {
			return Config{}, fmt.Errorf("READY=%q: want true or false", v)
		}
	}
	if c.ReadyAfter, err = parseDuration(getenv, "READY_AFTER"); err != nil {
		return Config{}, err
	}
	if c.ExitAfter, err = parseDuration(getenv, "EXIT_AFTER"); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parseInt reads an integer variable in [lo, hi]; def when it is unset.
func parseInt(getenv func(string) string, name string, def, lo, hi int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want an integer from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// parseDuration reads a non-negative Go duration variable; 0 when unset.
func parseDuration(getenv func(string) string, name string) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative Go duration such as 500ms or 10s", name, v)
	}
	return d, nil
}
