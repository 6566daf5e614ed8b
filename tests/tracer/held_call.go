// Starts a goroutine, then fsyncs a file, five times, and prints when (virtual us from the start)
// each goroutine ran, then the end (tracer_cases.py, held_call). Under vtime with
// VTIME_SYNC_COST=2000000 every fsync is a 2 ms call during which the main goroutine holds Go's
// processor (GOMAXPROCS=1 under vtime); the new goroutine waits on that processor's run queue,
// and natively runs once sysmon retakes the processor, 20 us into the call. A timer an hour away
// keeps a thread waiting in the network poller meanwhile: the poller runs timers, not that queue.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	time.AfterFunc(time.Hour, func() {})
	f, err := os.CreateTemp("", "held_call")
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	start := time.Now()
	ran := make(chan time.Duration, 5)
	for i := 0; i < 5; i++ {
		go func() { ran <- time.Since(start) }()
		if err := f.Sync(); err != nil {
			panic(err)
		}
	}
	for i := 0; i < 5; i++ {
		fmt.Printf("%d ", (<-ran).Microseconds())
	}
	fmt.Printf("end %d\n", time.Since(start).Microseconds())
}
