// Writes 20 lines to its standard error and 5 to its standard output, then prints how much
// virtual time each took: under vtime with VTIME_WRITE_COST=2:NS every write to descriptor 2
// costs NS (tracer_cases.py, write_cost). A goroutine ticking every 3 ms meanwhile shows the
// rest of the program going on while a write pays.
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
	close(stop)
	n := <-ticks
	fmt.Printf("stderr %d us, stdout %d us, ticks %d\n", mid.Microseconds(), (end - mid).Microseconds(), n)
}
