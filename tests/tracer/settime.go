// Sets the clock as Go programs do (syscall.Settimeofday: a raw system call), then sleeps a
// second: under vtime the wall clock moves one hour ahead, the monotonic clock does not, and the
// host's clock is never touched (the tracer emulates the call). Prints the moves in seconds.
// Never run it natively as root: it would set this machine's clock.
package main

import (
	"fmt"
	"syscall"
	"time"
)

func main() {
	before := time.Now()
	tv := syscall.NsecToTimeval(before.Add(time.Hour).UnixNano())
	err := syscall.Settimeofday(&tv)
	after := time.Now()
	fmt.Printf("settimeofday(+1 h): %v\n", err)
	fmt.Printf("wall clock moved %d s, monotonic %.6f s\n", after.Unix()-before.Unix(), after.Sub(before).Seconds())
	time.Sleep(time.Second)
	fmt.Printf("slept: monotonic %.6f s\n", time.Since(after).Seconds())
}
