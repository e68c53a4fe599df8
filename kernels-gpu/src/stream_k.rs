//! Stream-K's hand-over between blocks (`gemm_geometry::stream_k` describes the scheme and the
//! workspace): a block that leaves a tile unfinished *publishes* its accumulators into its slot
//! and raises its flag; the block that finishes the tile *waits* for each earlier piece's flag
//! and *adds* its slot. Used by the consumer warpgroups of `crate::tma_gemm::tma_wgmma`; the
//! producer warp never takes part, so the barrier here counts the consumers only.
//!
//! A slot holds a thread's accumulators in groups of four, thread-major within each group
//! (`slot[(4·group)·threads + 4·thread ..][..4]`): a warp stores or loads 512 contiguous bytes
//! per group. Only threads whose first row lies inside C store or load (the others hold rows
//! of zero-filled A); publisher and finisher map threads to rows alike, so they agree.

/// Named barrier 1 over the block's `consumer_threads` consumer threads (barrier 0 is
/// `bar.sync 0`, the whole block's, which the producer warp has left).
///
/// # Safety
/// Exactly the block's `consumer_threads` consumer threads (a multiple of 32) must call it.
#[inline(always)]
unsafe fn consumer_barrier(consumer_threads: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        core::arch::asm!("barrier.sync 1, {n};", n = in(reg32) consumer_threads, options(nostack))
    };
}

/// Publishes this thread's accumulators as its block's partial piece: stores them into `slot`
/// (if `row_inside`), waits for every consumer thread to have stored, and raises `flag` with
/// release semantics at GPU scope (thread 0), so that a block that acquires the flag sees the
/// whole slot.
///
/// # Safety
/// Every consumer thread of the block must call this together; `slot` must hold
/// `ACC · consumer_threads` writable fp32 (16-byte aligned) that no one reads until `flag` is
/// raised; `flag` must be a writable u32 that is 0 and that only this block raises.
#[inline(always)]
pub unsafe fn publish<const ACC: usize>(
    acc: &[f32; ACC],
    slot: *mut f32,
    flag: *mut u32,
    thread: u32,
    consumer_threads: u32,
    row_inside: bool,
) {
    if row_inside {
        seq_macro::seq!(group in 0..32 {
            if group < ACC / 4 {
                let at = slot.wrapping_add(4 * (group * consumer_threads + thread) as usize);
                // SAFETY: inside the slot (the caller's contract), 16-byte aligned.
                unsafe {
                    core::arch::asm!(
                        "st.global.v4.f32 [{at}], {{{a}, {b}, {c}, {d}}};",
                        at = in(reg64) at,
                        a = in(reg32) acc[4 * group],
                        b = in(reg32) acc[4 * group + 1],
                        c = in(reg32) acc[4 * group + 2],
                        d = in(reg32) acc[4 * group + 3],
                        options(nostack),
                    )
                };
            }
        });
    }
    // SAFETY: every consumer thread calls this (the caller's contract).
    unsafe { consumer_barrier(consumer_threads) };
    if thread == 0 {
        // The barrier orders the other threads' stores before this one's release, which is
        // cumulative: a block that acquires the flag sees them all.
        // SAFETY: `flag` is writable (the caller's contract).
        unsafe {
            core::arch::asm!("st.release.gpu.global.u32 [{flag}], 1;", flag = in(reg64) flag,
                options(nostack))
        };
    }
}

/// Waits until `flag` is raised (thread 0 spins with acquire semantics at GPU scope, then
/// clears it for the next launch), then adds the slot it guards to this thread's accumulators
/// (if `row_inside`, in accumulator order).
///
/// # Safety
/// Every consumer thread of the block must call this together; `slot` and `flag` must be a
/// slot and flag that exactly one other block publishes (with [`publish`]) in this launch,
/// a block the GPU starts no later than this one.
#[inline(always)]
pub unsafe fn wait_and_add<const ACC: usize>(
    acc: &mut [f32; ACC],
    slot: *const f32,
    flag: *mut u32,
    thread: u32,
    consumer_threads: u32,
    row_inside: bool,
) {
    if thread == 0 {
        // Only this block reads the flag in this launch, so clearing it once seen loses
        // nothing.
        loop {
            let raised: u32;
            // SAFETY: `flag` is readable (the caller's contract).
            unsafe {
                core::arch::asm!("ld.acquire.gpu.global.u32 {raised}, [{flag}];",
                    raised = out(reg32) raised, flag = in(reg64) flag, options(nostack))
            };
            if raised != 0 {
                break;
            }
        }
        // SAFETY: writable (the caller's contract).
        unsafe {
            core::arch::asm!("st.relaxed.gpu.global.u32 [{flag}], 0;", flag = in(reg64) flag,
                options(nostack))
        };
    }
    // Thread 0's acquire, then the barrier: the slot's stores happen before every thread's
    // loads below.
    // SAFETY: every consumer thread calls this (the caller's contract).
    unsafe { consumer_barrier(consumer_threads) };
    if row_inside {
        seq_macro::seq!(group in 0..32 {
            if group < ACC / 4 {
                let at = slot.wrapping_add(4 * (group * consumer_threads + thread) as usize);
                let (a, b, c, d): (f32, f32, f32, f32);
                // SAFETY: inside the published slot; `.cg` reads L2, where the other SM's
                // stores are, never a line this SM's L1 might hold.
                unsafe {
                    core::arch::asm!(
                        "ld.global.cg.v4.f32 {{{a}, {b}, {c}, {d}}}, [{at}];",
                        at = in(reg64) at,
                        a = out(reg32) a,
                        b = out(reg32) b,
                        c = out(reg32) c,
                        d = out(reg32) d,
                        options(nostack, readonly),
                    )
                };
                acc[4 * group] += a;
                acc[4 * group + 1] += b;
                acc[4 * group + 2] += c;
                acc[4 * group + 3] += d;
            }
        });
    }
}
