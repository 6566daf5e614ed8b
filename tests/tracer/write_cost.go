// Writes 20 lines to its standard error and 5 to its standard output, syncs a file 3 times, then
// prints how much virtual time each took: under vtime with VTIME_WRITE_COST=2:NS every write to
// descriptor 2 costs NS, with VTIME_SYNC_COST=NS every fsync (tracer_cases.py, write_cost). A
// goroutine ticking every 3 ms meanwhile shows whether the rest of the program goes on: not
// while a write pays (computation), while a sync waits (the disk).
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	ticks := make(chan int)
	stop := make(chan struct{})
	go func() {
		n := 0
		t := time.NewTicker(3 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				n++
			case <-stop:
				ticks <- n
				return
			}
		}
	}()
	start := time.Now()
	for i := 0; i < 20; i++ {
		fmt.Fprintf(os.Stderr, "line %d\n", i)
	}
	mid := time.Since(start)
	for i := 0; i < 5; i++ {
		fmt.Fprintf(os.Stdout, "out %d\n", i)
	}
	end := time.Since(start)
	f, err := os.CreateTemp("", "write_cost")
	if err != nil {
		panic(err)
	}
	defer os.Remove(f.Name())
	for i := 0; i < 3; i++ {
		f.WriteString("x")
		if err := f.Sync(); err != nil {
			panic(err)
		}
	}
	synced := time.Since(start)
	close(stop)
	n := <-ticks
	fmt.Printf("stderr %d us, stdout %d us, ticks %d; sync %d us\n", mid.Microseconds(), (end - mid).Microseconds(), n,
		(synced - end).Microseconds())
}
