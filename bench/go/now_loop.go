// N calls of time.Now() (bench/tracer.sh): the cost of Go's clock read, natively and under vtime.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	var sum int64
	for i := 0; i < n; i++ {
		sum += time.Now().UnixNano() & 1
	}
	fmt.Println(sum >= 0)
}
