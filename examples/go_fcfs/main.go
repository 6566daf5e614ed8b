// go_fcfs: the FCFS scheduler of periodic_fcfs written in Go, with Go's own timers the way Go
// schedulers (Kubernetes' among them) use them: a time.Ticker gives the instants of the FCFS
// passes (P, 2P, ... after SIMULATION_BEGINS), the socket waits with a read deadline at the next
// tick, and each pass runs under a context deadline. Decisions are handed over with the reply to
// the next message. It never asks Batsim for CALL_ME_LATER: under `vtime run` the broker turns
// the runtime's timed waits into them. It gives exactly the schedule of
// `periodic_fcfs --period P` (and of its event-based twin).
//
//	go_fcfs -s ENDPOINT --period P
//
// Binds a REP socket at ENDPOINT (libzmq through cgo), answers every message, and exits 0 after
// replying to SIMULATION_ENDS. Exit codes: 0 done; 1 invalid message or ZeroMQ error (one line on
// stderr); 2 bad command line.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

type event struct {
	Timestamp float64         `json:"timestamp"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
}

type message struct {
	Now    float64 `json:"now"`
	Events []event `json:"events"`
}

type waiting struct {
	id  string
	res int
}

type scheduler struct {
	period  time.Duration
	mu      sync.Mutex
	queue   []waiting
	free    map[int]bool
	nbRes   int
	outbox   []event
	ticker   *time.Ticker // started on SIMULATION_BEGINS
	nextPass time.Time    // the ticker's next tick
}

// parseIds reads an allocation such as "0-3 5".
func parseIds(alloc string) ([]int, error) {
	var ids []int
	for _, part := range strings.Fields(alloc) {
		lo, hi, found := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if found {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, err
			}
		}
		for i := a; i <= b; i++ {
			ids = append(ids, i)
		}
	}
	return ids, nil
}

// formatIds writes sorted ids as intervals: "0-3 5".
func formatIds(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

func decision(kind string, data any) event {
	raw, _ := json.Marshal(data)
	return event{Type: kind, Data: raw}
}

// pass is one FCFS pass over the queue, with s.mu held; it must finish before ctx's deadline
// (it always does: computation takes no virtual time).
func (s *scheduler) pass(ctx context.Context) {
	for len(s.queue) > 0 && ctx.Err() == nil {
		head := s.queue[0]
		if head.res > s.nbRes {
			s.outbox = append(s.outbox, decision("REJECT_JOB", map[string]string{"job_id": head.id}))
			s.queue = s.queue[1:]
			continue
		}
		if head.res > len(s.free) {
			return // strict FCFS: the head blocks
		}
		var all []int
		for id := range s.free {
			all = append(all, id)
		}
		sort.Ints(all)
		ids := all[:head.res]
		for _, id := range ids {
			delete(s.free, id)
		}
		s.outbox = append(s.outbox, decision("EXECUTE_JOB", map[string]string{"job_id": head.id, "alloc": formatIds(ids)}))
		s.queue = s.queue[1:]
	}
}

// record takes in one Batsim message; ended is true after SIMULATION_ENDS.
func (s *scheduler) record(in message) (ended bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	begins := false
	for _, e := range in.Events {
		switch e.Type {
		case "SIMULATION_BEGINS":
			var d struct {
				Nb  int `json:"nb_compute_resources"`
				Res []struct {
					ID int `json:"id"`
				} `json:"compute_resources"`
			}
			if err = json.Unmarshal(e.Data, &d); err != nil {
				return
			}
			s.nbRes = d.Nb
			for _, r := range d.Res {
				s.free[r.ID] = true
			}
			begins = true
		case "JOB_SUBMITTED":
			var d struct {
				ID  string `json:"job_id"`
				Job struct {
					Res int `json:"res"`
				} `json:"job"`
			}
			if err = json.Unmarshal(e.Data, &d); err != nil {
				return
			}
			s.queue = append(s.queue, waiting{d.ID, d.Job.Res})
		case "JOB_COMPLETED":
			var d struct {
				Alloc string `json:"alloc"`
			}
			if err = json.Unmarshal(e.Data, &d); err != nil {
				return
			}
			ids, perr := parseIds(d.Alloc)
			if perr != nil {
				return false, fmt.Errorf("bad alloc %q", d.Alloc)
			}
			for _, id := range ids {
				s.free[id] = true
			}
		case "SIMULATION_ENDS":
			s.outbox = nil // the reply to SIMULATION_ENDS carries nothing
			return true, nil
		}
	}
	if begins && s.ticker == nil {
		s.ticker = time.NewTicker(s.period) // its first tick comes one period after this instant
		s.nextPass = time.Now().Add(s.period)
	}
	return false, nil
}

// reply carries the decisions made since the last reply, stamped with the message's time.
func (s *scheduler) reply(in message) message {
	out := message{Now: in.Now, Events: []event{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.outbox {
		e.Timestamp = in.Now
		out.Events = append(out.Events, e)
	}
	s.outbox = nil
	return out
}

// runPass runs the pass due at the ticker's tick, under a context deadline of half a period.
func (s *scheduler) runPass() {
	tick := <-s.ticker.C // due now: the read deadline below expired at the same instant
	ctx, cancel := context.WithDeadline(context.Background(), tick.Add(s.period/2))
	defer cancel()
	s.mu.Lock()
	s.pass(ctx)
	s.mu.Unlock()
	s.nextPass = s.nextPass.Add(s.period)
}

func main() {
	endpoint := flag.String("s", "tcp://*:28000", "ZeroMQ endpoint to bind (REP)")
	period := flag.Float64("period", 0, "seconds between two scheduling passes (the first at P after SIMULATION_BEGINS)")
	flag.Parse()
	if *period <= 0 {
		fmt.Fprintln(os.Stderr, "go_fcfs: --period P (seconds, > 0) is required")
		os.Exit(2)
	}
	sock, err := bindRep(*endpoint)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_fcfs:", err)
		os.Exit(1)
	}
	s := &scheduler{period: time.Duration(*period * 1e9), free: map[int]bool{}}
	for {
		// One loop waits for both Batsim and the next pass: the socket's read deadline is the
		// ticker's next tick. Go's runtime fires a timer as soon as any of its threads finds it
		// due, so a ticker read by another goroutine would race with a message arriving at the
		// same instant (natively as under vtime); here the message comes first, as with the C++
		// periodic_fcfs, whose pass sees every event up to and including its instant.
		var deadline time.Time
		if s.ticker != nil {
			deadline = s.nextPass
		}
		raw, err := sock.recvUntil(deadline)
		if err == errDeadline {
			s.runPass() // its decisions go with the reply to the next message (a tick at this instant)
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "go_fcfs:", err)
			os.Exit(1)
		}
		var in message
		if err := json.Unmarshal(raw, &in); err != nil {
			fmt.Fprintln(os.Stderr, "go_fcfs: invalid message from Batsim:", err)
			os.Exit(1)
		}
		ended, err := s.record(in)
		if err != nil {
			fmt.Fprintln(os.Stderr, "go_fcfs: invalid message from Batsim:", err)
			os.Exit(1)
		}
		// A pass due at this very instant runs now, after the message's events, and its
		// decisions go with this reply: the pass sees every event up to and including its instant.
		if !ended && s.ticker != nil && !time.Now().Before(s.nextPass) {
			s.runPass()
		}
		out := s.reply(in)
		reply, _ := json.Marshal(out)
		if err := sock.send(reply); err != nil {
			fmt.Fprintln(os.Stderr, "go_fcfs:", err)
			os.Exit(1)
		}
		if ended {
			if s.ticker != nil {
				s.ticker.Stop()
			}
			sock.close()
			return
		}
	}
}
