// The clock reads injected into traced processes (see vdso_patch.h): code that the tracer copies
// into a page of the traced process, and to which it points that process's vDSO entries
// (__vdso_clock_gettime, __vdso_gettimeofday, __vdso_time). It reads the session's virtual clock
// from the segment's first page, mapped read-only into the process, exactly as
// vtime::Session::read_clock does (a seqlock of now, real base and rate; abi.h pins the offsets).
// Position-independent, no relocations: the only data it uses are the pointers at its start,
// written by the tracer (clock_blob_layout.h). Clocks vtime does not virtualise go to the kernel.
//
// The CPU-time model `calls` (docs/design.md) is charged here too, per process: past the
// session's burst of reads at one virtual instant (cpu_burst_calls), each read owes cpu_cost_ns,
// and a debt of cpu_quantum_ns is paid with a nanosleep of that long (a virtual sleep, through the tracer),
// so that a program spinning on the clock (a Go busy-wait on time.Since) sees time pass.
//
// Lives in .rodata: it is never run in the process that links it, only copied.

#include "clock_blob_layout.h"

#define SYS_nanosleep 35
#define SYS_clock_gettime 228
#define NS 1000000000

        .intel_syntax noprefix
        .section .rodata.vtime_clock_blob, "a"
        .p2align 6
        .globl vtime_clock_blob_begin
vtime_clock_blob_begin:
clock_ptr:
        .quad 0                       // ClockState* in the traced process
header_ptr:
        .quad 0                       // Header* (the segment's first page)
state_ptr:
        .quad 0                       // the charge state, a private read-write page

// rax = virtual now (ns), r8 = ClockState*, r9 = the seq it was read under. Clobbers rcx, rdx,
// r10, r11. Like Session::read_clock, a running clock's real time is taken before seq is
// checked again (abi::ClockState).
        .p2align 4
read_now:
        mov r8, [rip + clock_ptr]
1:      mov r9, [r8]                  // seq
        test r9b, 1
        jnz 2f
        mov rax, [r8 + 8]             // now_ns
        mov r10, [r8 + 24]            // rate_ppm
        test r10, r10
        jnz 3f
        cmp r9, [r8]
        jne 1b
        ret
2:      pause
        jmp 1b
3:      mov r11, [r8 + 72]            // tsc_mult
        test r11, r11
        jz 5f
        // The clock runs, read from the counter: now + max(0, tsc - tsc_base) * tsc_mult >> 32.
        mov rcx, rax
        rdtsc
        shl rdx, 32
        or rax, rdx
        sub rax, [r8 + 64]            // - tsc_base
        cmp r9, [r8]
        jne 1b
        test rax, rax
        jg 4f
        xor eax, eax                  // read ahead of the write that set tsc_base: no time yet
4:      mul r11                       // rdx:rax = ticks * tsc_mult
        shrd rax, rdx, 32
        add rax, rcx
        ret
5:      // The clock runs, read from CLOCK_MONOTONIC: now + (real - real base) * rate / 1e6.
        push rdi
        push rsi
        push rax
        push r10
        push r8
        push qword ptr [r8 + 16]      // real_base_ns
        sub rsp, 16
        mov edi, 1                    // CLOCK_MONOTONIC, the kernel's
        mov rsi, rsp
        mov eax, SYS_clock_gettime
        syscall
        mov rax, [rsp]
        imul rax, rax, NS
        add rax, [rsp + 8]
        add rsp, 16
        pop r11                       // real_base_ns
        pop r8
        pop r10
        pop rcx                       // now_ns
        pop rsi
        pop rdi
        cmp r9, [r8]
        jne 1b
        sub rax, r11
        imul r10                      // rdx:rax = elapsed * rate
        mov r10, 1000000
        idiv r10
        add rax, rcx
        ret

// A clock read of the program: read_now, charged under the `calls` model. Same registers out
// (rax now, r8 ClockState*); also clobbers nothing more than read_now.
        .p2align 4
charged_now:
        call read_now
        push rax
        mov r10, [rip + header_ptr]
        cmp dword ptr [r10 + VTIME_HDR_CPU_MODEL], VTIME_CPU_CALLS
        jne 8f
        mov r11, [rip + state_ptr]
        cmp r9, [r11 + VTIME_STATE_SEQ]
        je 1f
        mov [r11 + VTIME_STATE_SEQ], r9       // a new instant: a new burst
        mov qword ptr [r11 + VTIME_STATE_READS], 0
        mov qword ptr [r11 + VTIME_STATE_DEBT], 0
1:      add qword ptr [r11 + VTIME_STATE_READS], 1
        mov rcx, [r11 + VTIME_STATE_READS]
        cmp rcx, [r10 + VTIME_HDR_CPU_BURST]
        jbe 8f
        mov rcx, [r10 + VTIME_HDR_CPU_COST]
        add rcx, [r11 + VTIME_STATE_DEBT]
        mov [r11 + VTIME_STATE_DEBT], rcx
        cmp rcx, [r10 + VTIME_HDR_CPU_QUANTUM]
        jl 8f
        // Pay: sleep the debt (a quantum) in virtual time, then read again.
        mov qword ptr [r11 + VTIME_STATE_DEBT], 0
        push rdi
        push rsi
        sub rsp, 16
        mov rax, rcx
        xor edx, edx
        mov rcx, NS
        div rcx
        mov [rsp], rax
        mov [rsp + 8], rdx
        mov rdi, rsp
        xor esi, esi
        mov eax, SYS_nanosleep
        syscall
        add rsp, 16
        pop rsi
        pop rdi
        add rsp, 8
        jmp read_now                  // the time the payment moved to (tail call)
8:      pop rax
        ret

// rax (virtual now) -> CLOCK_REALTIME ns: + epoch + shift.
#define TO_REALTIME add rax, [r8 + 32]; add rax, [r8 + 48]

// int clock_gettime(clockid_t clk, struct timespec* ts)
        .p2align 4
        .globl vtime_blob_clock_gettime
vtime_blob_clock_gettime:
        cmp edi, 11
        ja 9f
        mov eax, 0xBF3                // REALTIME MONOTONIC MONOTONIC_RAW REALTIME_COARSE MONOTONIC_COARSE
        bt eax, edi                   // BOOTTIME REALTIME_ALARM BOOTTIME_ALARM TAI
        jnc 9f
        call charged_now
        mov ecx, 0x921                // the realtime ones: REALTIME REALTIME_COARSE REALTIME_ALARM TAI
        bt ecx, edi
        jc 1f
        add rax, [r8 + 40]            // mono_origin_ns
        jmp 2f
1:      TO_REALTIME
2:      xor edx, edx
        mov rcx, NS
        div rcx
        mov [rsi], rax
        mov [rsi + 8], rdx
        xor eax, eax
        ret
9:      mov eax, SYS_clock_gettime
        syscall
        ret

// int gettimeofday(struct timeval* tv, struct timezone* tz)
        .p2align 4
        .globl vtime_blob_gettimeofday
vtime_blob_gettimeofday:
        test rdi, rdi
        jz 1f
        call charged_now
        TO_REALTIME
        xor edx, edx
        mov rcx, NS
        div rcx
        mov [rdi], rax
        mov rax, rdx
        xor edx, edx
        mov ecx, 1000
        div rcx
        mov [rdi + 8], rax
1:      test rsi, rsi
        jz 2f
        mov qword ptr [rsi], 0
2:      xor eax, eax
        ret

// time_t time(time_t* out)
        .p2align 4
        .globl vtime_blob_time
vtime_blob_time:
        call charged_now
        TO_REALTIME
        xor edx, edx
        mov rcx, NS
        div rcx
        test rdi, rdi
        jz 1f
        mov [rdi], rax
1:      ret

        .globl vtime_clock_blob_end
vtime_clock_blob_end:

        .section .note.GNU-stack, "", @progbits
