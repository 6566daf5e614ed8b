// N calls of time.Sleep(1 µs) (bench/tracer.sh): under vtime each is a timed wait the tracer
// virtualises and the clock advances past.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	start := time.Now()
	for i := 0; i < n; i++ {
		time.Sleep(time.Microsecond)
	}
	fmt.Printf("%d sleeps, %.6f s of (virtual) time\n", n, time.Since(start).Seconds())
}
