// A static Go program that arms timers with raw system calls, as a Go library wrapping
// timerfd or setitimer would (Go's syscall package has no wrapper for them): a periodic timerfd
// read with blocking reads, then a one-shot setitimer(ITIMER_REAL) whose SIGALRM arrives through
// signal.Notify. Prints the virtual instants (exact under vtime, about these natively).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	start := time.Now()
	at := func() string { return fmt.Sprintf("%.6f", time.Since(start).Seconds()) }

	// CLOCK_MONOTONIC, first at 0.5 s, then every 250 ms; itimerspec is {interval, value}.
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, 1, 0, 0)
	if errno != 0 {
		fmt.Println("timerfd_create:", errno)
		os.Exit(1)
	}
	spec := [4]int64{0, 250000000, 0, 500000000}
	if _, _, errno = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		fmt.Println("timerfd_settime:", errno)
		os.Exit(1)
	}
	var n uint64
	for i := 0; i < 3; i++ {
		if _, err := syscall.Read(int(fd), (*[8]byte)(unsafe.Pointer(&n))[:]); err != nil {
			fmt.Println("read:", err)
			os.Exit(1)
		}
		fmt.Printf("timerfd: %d expiration(s) at %s\n", n, at())
	}
	syscall.Close(int(fd))

	alarm := make(chan os.Signal, 1)
	signal.Notify(alarm, syscall.SIGALRM)
	itv := [4]int64{0, 0, 0, 300000} // itimerval {interval, value}, microseconds
	if _, _, errno = syscall.Syscall(syscall.SYS_SETITIMER, 0, uintptr(unsafe.Pointer(&itv)), 0); errno != 0 {
		fmt.Println("setitimer:", errno)
		os.Exit(1)
	}
	<-alarm
	fmt.Printf("SIGALRM at %s\n", at())
}
