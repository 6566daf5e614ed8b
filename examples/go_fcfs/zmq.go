// A REP socket through Debian's libzmq (cgo): Debian packages no Go ZeroMQ library.
//
// The socket is waited on the Go way, not in a blocking C call: libzmq's ZMQ_FD (readable when
// the socket's state may have changed) goes to Go's network poller, and only non-blocking calls
// cross into C. A goroutine blocked in a C call would hold its P (the runtime's processor)
// until the runtime's monitor takes it back 20 us later, delaying every other goroutine by that
// much, in virtual time as in real time; a goroutine parked in the poller holds nothing.
package main

// #cgo pkg-config: libzmq
// #include <stdlib.h>
// #include <zmq.h>
import "C"

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

type repSocket struct {
	ctx, sock unsafe.Pointer
	fd        *os.File        // a duplicate of ZMQ_FD, registered with the poller
	conn      syscall.RawConn // waits for it to be readable
}

func zmqError(what string) error {
	return fmt.Errorf("%s: %s", what, C.GoString(C.zmq_strerror(C.zmq_errno())))
}

func bindRep(endpoint string) (*repSocket, error) {
	ctx := C.zmq_ctx_new()
	if ctx == nil {
		return nil, zmqError("zmq_ctx_new")
	}
	sock := C.zmq_socket(ctx, C.ZMQ_REP)
	if sock == nil {
		return nil, zmqError("zmq_socket")
	}
	ep := C.CString(endpoint)
	defer C.free(unsafe.Pointer(ep))
	if C.zmq_bind(sock, ep) != 0 {
		return nil, zmqError("zmq_bind " + endpoint)
	}
	var fd C.int
	size := C.size_t(unsafe.Sizeof(fd))
	if C.zmq_getsockopt(sock, C.ZMQ_FD, unsafe.Pointer(&fd), &size) != 0 {
		return nil, zmqError("zmq_getsockopt ZMQ_FD")
	}
	dup, err := syscall.Dup(int(fd))
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "zmq")
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &repSocket{ctx, sock, f, conn}, nil
}

// ready says whether the socket has a message to read.
func (s *repSocket) ready() bool {
	var events C.int
	size := C.size_t(unsafe.Sizeof(events))
	if C.zmq_getsockopt(s.sock, C.ZMQ_EVENTS, unsafe.Pointer(&events), &size) != 0 {
		return true // let recv report the error
	}
	return events&C.ZMQ_POLLIN != 0
}

var errDeadline = errors.New("deadline")

// recvUntil returns the next message, or errDeadline once `deadline` (if not zero) has come and
// no message is waiting: a message there at the deadline's instant is returned first.
func (s *repSocket) recvUntil(deadline time.Time) ([]byte, error) {
	var msg C.zmq_msg_t
	C.zmq_msg_init(&msg)
	defer C.zmq_msg_close(&msg)
	if err := s.fd.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	for {
		// Parks in the poller until ZMQ_FD is readable and ZMQ_EVENTS says a message is there.
		err := s.conn.Read(func(uintptr) bool { return s.ready() })
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if !s.ready() {
				return nil, errDeadline
			}
		} else if err != nil {
			return nil, err
		}
		if C.zmq_msg_recv(&msg, s.sock, C.ZMQ_DONTWAIT) >= 0 {
			return C.GoBytes(C.zmq_msg_data(&msg), C.int(C.zmq_msg_size(&msg))), nil
		}
		if e := C.zmq_errno(); e != C.EAGAIN && e != C.EINTR {
			return nil, zmqError("zmq_msg_recv")
		}
	}
}

func (s *repSocket) send(b []byte) error {
	p := C.CBytes(b)
	defer C.free(p)
	for C.zmq_send(s.sock, p, C.size_t(len(b)), 0) < 0 {
		if C.zmq_errno() != C.EINTR {
			return zmqError("zmq_send")
		}
	}
	return nil
}

// close lets the last reply leave (linger up to 30 s), then closes the socket and the context.
func (s *repSocket) close() {
	s.fd.Close()
	linger := C.int(30000)
	C.zmq_setsockopt(s.sock, C.ZMQ_LINGER, unsafe.Pointer(&linger), C.size_t(unsafe.Sizeof(linger)))
	C.zmq_close(s.sock)
	C.zmq_ctx_term(s.ctx)
}
