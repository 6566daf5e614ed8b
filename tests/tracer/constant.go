// A Go function's constant replaced by the tracer (tracer_cases.py go_constant, go_ticks_test):
// period() loads one second as a constant (MOVL $1000000000, AX); the program sleeps that long
// three times in a loop of its own, as wait.Until does, and prints what it slept and when it ended.
// With VTIME_GO_CONSTANT=main.period:1000000000:1250000000 it sleeps 1.25 s each time.
package main

import (
	"fmt"
	"time"
)

//go:noinline
func period() time.Duration { return time.Second }

func main() {
	start := time.Now()
	done := make(chan struct{})
	go func() {
		for i := 0; i < 3; i++ {
			time.Sleep(period())
		}
		close(done)
	}()
	<-done
	fmt.Printf("period %d ns, done at %.6f\n", period(), time.Since(start).Seconds())
}
