// Sleeps one virtual second at a time, forever, after printing its pid: the test that kills
// vtime with SIGKILL checks that this traced process goes with it.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	fmt.Printf("ready %d\n", os.Getpid())
	for {
		time.Sleep(time.Second)
	}
}
