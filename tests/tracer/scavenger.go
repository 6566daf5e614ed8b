// Go's background scavenger under vtime (tracer_cases.py go_scavenger): three rounds of 100 MB
// allocated, dropped and collected, each followed by a 1 s sleep. Natively the scavenger then
// returns the freed memory to the kernel in rounds a few ms apart, each ended by a runtime
// timer; under vtime it is kept from running (tracer/go_scavenger.h), so the sleeps are the
// program's only instants: three clock advances.
package main

import (
	"fmt"
	"runtime"
	"time"
)

var sink [][]byte

func main() {
	start := time.Now()
	for round := 0; round < 3; round++ {
		for i := 0; i < 400; i++ {
			sink = append(sink, make([]byte, 256<<10))
		}
		sink = nil
		runtime.GC()
		time.Sleep(time.Second)
	}
	fmt.Printf("done at %.6f\n", time.Since(start).Seconds())
}
