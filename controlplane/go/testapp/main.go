// Command testapp is the only program in the test node's images.
//
//	testapp run [--id ID] [--log FILE] [--on-term ignore|exit] [--term-delay D] [--hold-mib N] [--exit-after D]
//	testapp prestop [--id ID] [--log FILE] --sleep D
//	testapp pause
//	testapp image --name REF --out FILE [-- ENTRYPOINT...]
//
// run logs every signal it receives, one line each, to stdout and to --log:
//
//	<CLOCK_MONOTONIC ns> <unix ns> <id> <event>
//
// so a test on the same machine can compare the kubelet's actions with its own clock.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testapp run|prestop|pause|image ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "prestop":
		err = preStop(os.Args[2:])
	case "pause":
		pause()
	case "image":
		err = image(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testapp:", err)
		os.Exit(1)
	}
}

// monotonic reads CLOCK_MONOTONIC, the clock Python's time.monotonic() reads on Linux.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

type logger struct {
	id   string
	file *os.File
}

func newLogger(id, path string) *logger {
	l := &logger{id: id}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testapp: log file:", err)
		} else {
			l.file = f
		}
	}
	return l
}

func (l *logger) log(event string) {
	line := fmt.Sprintf("%d %d %s %s\n", monotonic(), time.Now().UnixNano(), l.id, event)
	os.Stdout.WriteString(line)
	if l.file != nil {
		l.file.WriteString(line)
		l.file.Sync()
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	id := fs.String("id", "app", "name written in every log line")
	path := fs.String("log", "", "also append events to this file")
	onTerm := fs.String("on-term", "ignore", "on SIGTERM: ignore, or exit (after --term-delay)")
	termDelay := fs.Duration("term-delay", 0, "with --on-term exit: how long to take")
	holdMiB := fs.Int("hold-mib", 0, "allocate and touch this many MiB")
	exitAfter := fs.Duration("exit-after", 0, "exit 0 on its own after this long (0: never)")
	fs.Parse(args)

	l := newLogger(*id, *path)
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE)
	l.log(fmt.Sprintf("start pid=%d", os.Getpid()))
	var held [][]byte
	for i := 0; i < *holdMiB; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		held = append(held, b)
	}
	if *holdMiB > 0 {
		l.log(fmt.Sprintf("holding %d MiB", len(held)))
	}
	var selfExit <-chan time.Time
	if *exitAfter > 0 {
		selfExit = time.After(*exitAfter)
	}
	var termExit <-chan time.Time
	for {
		select {
		case s := <-signals:
			l.log("signal " + signalName(s))
			if s == syscall.SIGTERM && *onTerm == "exit" && termExit == nil {
				termExit = time.After(*termDelay)
			}
		case <-termExit:
			l.log("exit after SIGTERM")
			os.Exit(0)
		case <-selfExit:
			l.log("exit on its own")
			os.Exit(0)
		}
	}
}

func signalName(s os.Signal) string {
	names := map[os.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP",
		syscall.SIGQUIT: "SIGQUIT", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[s]; ok {
		return n
	}
	return s.String()
}

func preStop(args []string) error {
	fs := flag.NewFlagSet("prestop", flag.ExitOnError)
	id := fs.String("id", "app", "name written in every log line")
	path := fs.String("log", "", "also append events to this file")
	sleep := fs.Duration("sleep", 0, "how long the hook takes")
	fs.Parse(args)
	l := newLogger(*id, *path)
	l.log("prestop-start")
	time.Sleep(*sleep)
	l.log("prestop-end")
	return nil
}

// pause is the sandbox's process: it waits, reaps nothing (it starts nothing) and exits on SIGINT/SIGTERM.
func pause() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	<-signals
	os.Exit(0)
}
