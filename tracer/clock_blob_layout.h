/* The layout clock_blob.S relies on: where the tracer writes the blob's pointers, and the offsets
 * of the header fields it reads. Shared by the assembly and by vdso_patch.cpp, which checks the
 * offsets against abi.h with static_asserts. */
#pragma once

/* Pointers at the start of the blob, written by the tracer. */
#define VTIME_BLOB_CLOCK_PTR 0  /* abi::ClockState* (in the segment's first page) */
#define VTIME_BLOB_HEADER_PTR 8 /* abi::Header* (the page itself) */
#define VTIME_BLOB_STATE_PTR 16 /* a private read-write page: the CPU-time charge below */

/* abi::Header fields of the CPU-time model. */
#define VTIME_HDR_CPU_MODEL 0x70
#define VTIME_HDR_CPU_COST 0x88
#define VTIME_HDR_CPU_QUANTUM 0x90
#define VTIME_HDR_CPU_BURST 0x98

/* The charge state (per process): clock seq of the instant, reads at it, debt in ns. */
#define VTIME_STATE_SEQ 0
#define VTIME_STATE_READS 8
#define VTIME_STATE_DEBT 16

#define VTIME_CPU_CALLS 1     /* abi::kCpuCalls */
