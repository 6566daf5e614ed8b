// Go's timers while a goroutine blocks in a system call: os/exec's wait for a child under a
// context timeout, time.AfterFunc during exec.Command(...).Run(), a raw syscall.Nanosleep with a
// goroutine's timer due meanwhile, and a blocking read of a pipe that a goroutine writes after a
// sleep. Such a goroutine keeps its processor (P), and with it the timers on that P, until
// sysmon's next look hands the P over (microseconds, natively); under vtime the timers must fire
// at their deadlines, not when the blocking call ends (docs/tracer.md, "Go's sysmon").
package main

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Set by syscall_timers_cgo.go in the cgo build: goroutines blocked in C calls.
var cgoCases func(at func() float64)

func main() {
	start := time.Now()
	at := func() float64 { return time.Since(start).Seconds() }
	if cgoCases != nil {
		cgoCases(at)
		start = time.Now()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	err := exec.CommandContext(ctx, "sleep", "5").Run()
	cancel()
	fmt.Printf("sleep 5 under a 1.2 s context: %v at %.6f\n", err, at())

	done := make(chan float64, 1)
	time.AfterFunc(time.Second, func() { done <- at() })
	err = exec.Command("sleep", "3").Run()
	fmt.Printf("AfterFunc(1 s) during sleep 3 at %.6f; sleep: %v at %.6f\n", <-done, err, at())

	time.AfterFunc(500*time.Millisecond, func() { done <- at() })
	ts := syscall.Timespec{Sec: 2}
	err = syscall.Nanosleep(&ts, nil)
	fmt.Printf("AfterFunc(0.5 s) during syscall.Nanosleep(2 s) at %.6f; nanosleep: %v at %.6f\n", <-done, err, at())

	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Println("pipe:", err)
		return
	}
	go func() {
		time.Sleep(700 * time.Millisecond)
		syscall.Write(p[1], []byte("x"))
	}()
	b := make([]byte, 1)
	n, err := syscall.Read(p[0], b)
	fmt.Printf("blocking read of a pipe written after 0.7 s: %q %v at %.6f\n", b[:n], err, at())
}
