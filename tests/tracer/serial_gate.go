// serial_gate.c in Go (tracer_cases.py serial_gate_go): the parent starts two copies of itself
// as children, each reading a pipe with a 5 s deadline (Go's poller: epoll_pwait); at 1 s it
// writes "1" to the second child's pipe, computes for a while, then writes "2" to it and "x" to
// the first child's. Under vtime exec --serialize the second child reads "12" in one read and
// the children print in pid order.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func child(name string) {
	start := time.Now()
	// Non-blocking, so that the read waits in Go's poller (os.NewFile leaves a blocking
	// descriptor to plain read(2) calls, which have no deadline).
	syscall.SetNonblock(3, true)
	f := os.NewFile(3, "pipe")
	if err := f.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		panic(err)
	}
	buf := make([]byte, 16)
	n, _ := f.Read(buf)
	fmt.Printf("%s pid %d read '%s' at %.3f\n", name, os.Getpid(), buf[:n], time.Since(start).Seconds())
}

func cpuMillis() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return (ru.Utime.Sec+ru.Stime.Sec)*1000 + int64(ru.Utime.Usec+ru.Stime.Usec)/1000
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "child" {
		child(os.Args[2])
		return
	}
	start := time.Now()
	var writers []*os.File
	var cmds []*exec.Cmd
	for _, name := range []string{"first", "second"} {
		r, w, err := os.Pipe()
		if err != nil {
			panic(err)
		}
		c := exec.Command(os.Args[0], "child", name)
		c.Stdout = os.Stdout
		c.Stderr = os.Stderr
		c.ExtraFiles = []*os.File{r}
		if err := c.Start(); err != nil {
			panic(err)
		}
		r.Close()
		writers = append(writers, w)
		cmds = append(cmds, c)
	}
	time.Sleep(time.Second)
	writers[1].Write([]byte("1"))
	for t0 := cpuMillis(); cpuMillis()-t0 < 200; {
	}
	writers[1].Write([]byte("2"))
	writers[0].Write([]byte("x"))
	for _, c := range cmds {
		c.Wait()
	}
	fmt.Printf("parent done at %.3f\n", time.Since(start).Seconds())
}
