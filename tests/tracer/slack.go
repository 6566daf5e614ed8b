// Prints how late (virtual us past the time asked) a Go program's waits end (tracer_cases.py,
// timer_slack): time.Sleep, which waits in the runtime's network poller (an epoll_pwait with the
// timeout in ms), for 1 s and for 10 ms, and syscall.Nanosleep, a raw sleep, for 1 s. Under
// `vtime exec --timer-slack 50us --sleep-latency 0` the poller's waits end 0.1% of their timeout
// late, at least 50 us, and the sleep 50 us late, as Linux ends them (docs/shim.md); but a wait
// ends at the first advance past its deadline asked for ("shared").
package main

import (
	"fmt"
	"syscall"
	"time"
)

// A raw sleep of d, resumed after a signal as a real program must: Go's runtime may interrupt a
// thread's system call with its preemption signal (SIGURG), and the call then returns EINTR with
// the time left.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}

func late(d time.Duration, wait func()) int64 {
	t := time.Now()
	wait()
	return (time.Since(t) - d).Microseconds()
}

func main() {
	fmt.Printf("sleep %d\n", late(time.Second, func() { time.Sleep(time.Second) }))
	fmt.Printf("sleep_short %d\n", late(10*time.Millisecond, func() { time.Sleep(10 * time.Millisecond) }))
	fmt.Printf("nanosleep %d\n", late(time.Second, func() { nanosleep(time.Second) }))
	// The slack is a range: the poller's wait for the 1 s timer may end from 1 s to 1.001 s on,
	// so the advance that ends a raw sleep of 1.0005 s (at 1.00055 s) ends it too.
	done := make(chan int64)
	go func() {
		other := time.Second + 500*time.Microsecond
		done <- late(other, func() { nanosleep(other) })
	}()
	shared := late(time.Second, func() { time.Sleep(time.Second) })
	fmt.Printf("shared %d %d\n", shared, <-done)
}
