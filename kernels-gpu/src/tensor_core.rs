//! Inline-PTX wrappers for the tensor cores, shared by the tensor-core rungs and the dequant GEMM:
//! `mma.sync` (TF32, FP16 and BF16), `ldmatrix`, and the conversions their operands need.
//!
//! A warp-wide `mma.sync` multiplies small tiles held *spread over the warp's registers*. The
//! PTX ISA fixes which thread holds which element ("fragment layouts"); with `lane` = 0..31,
//! `group = lane / 4` and `quad = lane % 4`:
//!
//! | operand | m16n8k8 TF32 (32-bit regs) | m16n8k16 FP16 (regs of two halves) |
//! |---|---|---|
//! | A, 16×k, row-major | `a0 (g, q)`, `a1 (g+8, q)`, `a2 (g, q+4)`, `a3 (g+8, q+4)` | `a0 (g, 2q..)`, `a1 (g+8, 2q..)`, `a2 (g, 2q+8..)`, `a3 (g+8, 2q+8..)` |
//! | B, k×8, "col" | `b0 (q, g)`, `b1 (q+4, g)` | `b0 (2q.., g)`, `b1 (2q+8.., g)` |
//! | C, 16×8 fp32 | `c0, c1 (g, 2q, 2q+1)`, `c2, c3 (g+8, 2q, 2q+1)` | the same |
//!
//! (`2q..` is the pair of elements `2q, 2q+1` along k, low half first.) [`load_matrix_x4`] and
//! [`load_matrix_x4_transposed`] read exactly these FP16 layouts out of shared memory.
//!
//! Hopper's warpgroup MMA (`wgmma`, sm_90a) works on 64×N tiles for four warps at once, reads
//! its operands straight from shared memory through descriptors, and runs asynchronously. Its
//! wrappers exist only in the sm_90a build (`cfg(target_feature = "sm_90a")`): a kernel of the
//! portable sm_80 build that reached for one would not compile, rather than fail in ptxas or
//! at module load.

use crate::element::{Bf16, Element, F16};
#[cfg(target_feature = "sm_90a")]
use seq_macro::seq;

/// Rounds an fp32 value to TF32 (10 explicit mantissa bits) to nearest, ties away from zero
/// (`cvt.rna.tf32.f32`). The tensor core would otherwise simply drop the low 13 bits.
#[inline(always)]
pub fn to_tf32(x: f32) -> u32 {
    let bits: u32;
    unsafe {
        core::arch::asm!(
            "cvt.rna.tf32.f32 {bits}, {x};",
            bits = out(reg32) bits,
            x = in(reg32) x,
            options(pure, nomem, nostack),
        )
    };
    bits
}

/// `acc += a · b` on a 16×8×8 tile: TF32 inputs (from [`to_tf32`]), fp32 accumulation.
#[inline(always)]
pub fn mma_tf32_m16n8k8(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]) {
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \
             {{{c0}, {c1}, {c2}, {c3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
             {{{c0}, {c1}, {c2}, {c3}}};",
            c0 = inout(reg32) acc[0],
            c1 = inout(reg32) acc[1],
            c2 = inout(reg32) acc[2],
            c3 = inout(reg32) acc[3],
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b0 = in(reg32) b[0],
            b1 = in(reg32) b[1],
            options(pure, nomem, nostack),
        )
    };
}

/// `acc += a · b` on a 16×8×16 tile: fp16 inputs (two per register), fp32 accumulation.
#[inline(always)]
pub fn mma_f16_m16n8k16(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]) {
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \
             {{{c0}, {c1}, {c2}, {c3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
             {{{c0}, {c1}, {c2}, {c3}}};",
            c0 = inout(reg32) acc[0],
            c1 = inout(reg32) acc[1],
            c2 = inout(reg32) acc[2],
            c3 = inout(reg32) acc[3],
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b0 = in(reg32) b[0],
            b1 = in(reg32) b[1],
            options(pure, nomem, nostack),
        )
    };
}

/// `acc += a · b` on a 16×8×16 tile: bf16 inputs (two per register, the same fragment layout
/// as fp16), fp32 accumulation. sm_80 and newer.
#[inline(always)]
pub fn mma_bf16_m16n8k16(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]) {
    // SAFETY: a register-only warp-wide instruction; every lane of the warp executes it
    // together (the callers run it in warp-uniform control flow).
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \
             {{{c0}, {c1}, {c2}, {c3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, \
             {{{c0}, {c1}, {c2}, {c3}}};",
            c0 = inout(reg32) acc[0],
            c1 = inout(reg32) acc[1],
            c2 = inout(reg32) acc[2],
            c3 = inout(reg32) acc[3],
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b0 = in(reg32) b[0],
            b1 = in(reg32) b[1],
            options(pure, nomem, nostack),
        )
    };
}

/// Two fp32 values rounded to bf16 (to nearest even) and packed into one register, `low` in
/// bits 0–15 (see [`pack_f16x2`]). sm_80 and newer.
#[inline(always)]
pub fn pack_bf16x2(low: f32, high: f32) -> u32 {
    let packed: u32;
    // SAFETY: a pure register conversion.
    unsafe {
        core::arch::asm!(
            // The first source lands in the upper half.
            "cvt.rn.bf16x2.f32 {packed}, {high}, {low};",
            packed = out(reg32) packed,
            high = in(reg32) high,
            low = in(reg32) low,
            options(pure, nomem, nostack),
        )
    };
    packed
}

/// A 16-bit floating-point element that `mma.sync` m16n8k16 multiplies with fp32 accumulation
/// (fp16 or bf16): what a kernel generic over the two needs beyond [`Element`]. Both share the
/// fragment layouts of the table above and `ldmatrix` (which moves 16-bit values blindly).
pub trait HalfElement: Element {
    /// The element with these bits.
    fn from_bits(bits: u16) -> Self;
    /// `acc += a · b` on a 16×8×16 tile of this element type.
    fn mma_m16n8k16(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]);
    /// Two fp32 values rounded to nearest even, packed `low` first.
    fn pack2(low: f32, high: f32) -> u32;
}

impl HalfElement for F16 {
    #[inline(always)]
    fn from_bits(bits: u16) -> Self {
        F16(bits)
    }
    #[inline(always)]
    fn mma_m16n8k16(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]) {
        mma_f16_m16n8k16(acc, a, b)
    }
    #[inline(always)]
    fn pack2(low: f32, high: f32) -> u32 {
        pack_f16x2(low, high)
    }
}

impl HalfElement for Bf16 {
    #[inline(always)]
    fn from_bits(bits: u16) -> Self {
        Bf16(bits)
    }
    #[inline(always)]
    fn mma_m16n8k16(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]) {
        mma_bf16_m16n8k16(acc, a, b)
    }
    #[inline(always)]
    fn pack2(low: f32, high: f32) -> u32 {
        pack_bf16x2(low, high)
    }
}

/// `ldmatrix.x4`: four 8×8 fp16 matrices from shared memory, one register of each per thread.
/// Lanes 8·j … 8·j + 7 give the addresses (shared state space, 16-byte aligned) of the eight
/// 16-byte rows of matrix j; thread `lane` receives elements `(lane / 4, 2·(lane % 4) ..)` of
/// each. For a row-major 16×16 A tile, lane `l` pointing at row `l % 16`, column `8·(l / 16)`
/// yields exactly the m16n8k16 A fragment.
///
/// # Safety
/// Warp-collective: all 32 threads of the warp must call it together (convergent). Each lane's
/// `address` must be a 16-byte-aligned shared-state-space address of 16 readable bytes inside this
/// block's dynamic shared memory, written before a barrier that precedes the call.
#[inline(always)]
pub unsafe fn load_matrix_x4(address: u32) -> [u32; 4] {
    let (r0, r1, r2, r3): (u32, u32, u32, u32);
    unsafe {
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{address}];",
            r0 = out(reg32) r0,
            r1 = out(reg32) r1,
            r2 = out(reg32) r2,
            r3 = out(reg32) r3,
            address = in(reg32) address,
            options(readonly, nostack),
        )
    };
    [r0, r1, r2, r3]
}

/// `ldmatrix.x4.trans`: like [`load_matrix_x4`], but each 8×8 matrix arrives transposed, so
/// thread `lane` receives elements `(2·(lane % 4) .., lane / 4)`. For a row-major k×n B tile,
/// lane `l` pointing at row `l % 16`, column `8·(l / 16)` yields the B fragments of two
/// neighbouring n8 tiles: `[b0, b1]` of the first, then of the second.
///
/// # Safety
/// That of [`load_matrix_x4`].
#[inline(always)]
pub unsafe fn load_matrix_x4_transposed(address: u32) -> [u32; 4] {
    let (r0, r1, r2, r3): (u32, u32, u32, u32);
    unsafe {
        core::arch::asm!(
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{address}];",
            r0 = out(reg32) r0,
            r1 = out(reg32) r1,
            r2 = out(reg32) r2,
            r3 = out(reg32) r3,
            address = in(reg32) address,
            options(readonly, nostack),
        )
    };
    [r0, r1, r2, r3]
}

/// Two fp32 values rounded to fp16 (to nearest even) and packed into one register, `low` in
/// bits 0–15: the layout of two neighbouring fp16 elements in memory.
#[inline(always)]
pub fn pack_f16x2(low: f32, high: f32) -> u32 {
    let packed: u32;
    unsafe {
        core::arch::asm!(
            // The first source lands in the upper half.
            "cvt.rn.f16x2.f32 {packed}, {high}, {low};",
            packed = out(reg32) packed,
            high = in(reg32) high,
            low = in(reg32) low,
            options(pure, nomem, nostack),
        )
    };
    packed
}

/// [`mma_f16_m16n8k16`], or [`mma_bf16_m16n8k16`] with `BF16`: for kernels that take the
/// element type as a constant.
#[inline(always)]
pub fn mma_m16n8k16<const BF16: bool>(acc: &mut [f32; 4], a: &[u32; 4], b: &[u32; 2]) {
    if BF16 {
        mma_bf16_m16n8k16(acc, a, b)
    } else {
        mma_f16_m16n8k16(acc, a, b)
    }
}

/// [`pack_f16x2`], or [`pack_bf16x2`] with `BF16`.
#[inline(always)]
pub fn pack_half2<const BF16: bool>(low: f32, high: f32) -> u32 {
    if BF16 {
        pack_bf16x2(low, high)
    } else {
        pack_f16x2(low, high)
    }
}

/// A 64-bit `wgmma` shared-memory matrix descriptor for a tile stored with the 128-byte swizzle
/// (8 rows of 128 bytes form a 1 024-byte atom in which 16-byte chunk `c` of row `r` sits at
/// chunk `c ^ (r % 8)`; the hardware applies the XOR to address bits 4–6 from bits 7–9, so the
/// atoms must be 1 024-byte aligned). Bits 0–13: start address; 16–29: leading byte offset;
/// 32–45: stride byte offset, each in units of 16 bytes; 62–63: swizzle mode (1 = 128 B).
/// For a K-major tile the stride offset steps from one 8-row group to the next (1 024 bytes)
/// and the leading offset is unused; for an MN-major tile the leading offset steps from one
/// 64-element column block to the next and the stride offset from one group of 8 k-rows to the
/// next.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn swizzled_descriptor(address: u32, leading_bytes: u32, stride_bytes: u32) -> u64 {
    let encode = |x: u32| ((x & 0x3FFFF) >> 4) as u64;
    encode(address) | encode(leading_bytes) << 16 | encode(stride_bytes) << 32 | 1 << 62
}

/// `wgmma.fence`: orders this thread's earlier register accesses to the accumulators before
/// the warpgroup's next `wgmma.mma_async`.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn warpgroup_fence() {
    unsafe { core::arch::asm!("wgmma.fence.sync.aligned;", options(nostack)) };
}

/// `wgmma.commit_group`: closes the group of `wgmma.mma_async` issued since the last commit.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn warpgroup_commit() {
    unsafe { core::arch::asm!("wgmma.commit_group.sync.aligned;", options(nostack)) };
}

/// `wgmma.wait_group N`: waits until at most `PENDING` committed groups are still running.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn warpgroup_wait<const PENDING: u32>() {
    unsafe {
        core::arch::asm!("wgmma.wait_group.sync.aligned {n};", n = const PENDING, options(nostack))
    };
}

/// `fence.proxy.async.shared::cta`: makes this thread's ordinary (generic-proxy) writes to
/// shared memory, `cp.async` included, visible to the async proxy through which `wgmma` reads
/// its operands. Each writing thread runs it, then a barrier.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn fence_shared_for_async_proxy() {
    unsafe { core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack)) };
}

/// `setmaxnreg.inc`: raises this warpgroup's registers per thread to `REGISTERS` (waiting until
/// other warpgroups have released enough), so that the code after it may use that many.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn warpgroup_registers_raise<const REGISTERS: u32>() {
    unsafe {
        core::arch::asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const REGISTERS, options(nostack))
    };
}

/// `setmaxnreg.dec`: lowers this warpgroup's registers per thread to `REGISTERS`, releasing the
/// rest to the SM for another warpgroup's [`warpgroup_registers_raise`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn warpgroup_registers_lower<const REGISTERS: u32>() {
    unsafe {
        core::arch::asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const REGISTERS, options(nostack))
    };
}

/// Pins the first `COUNT` accumulators behind the preceding [`warpgroup_wait`]: the compiler sees no data
/// dependency between the wait and the registers `wgmma` writes in the background, and could
/// otherwise move their first use above it.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub fn pin_accumulators<const COUNT: usize, const N: usize>(acc: &mut [f32; N]) {
    seq!(i in 0..128 {
        if i < COUNT && i < N {
            unsafe { core::arch::asm!("/* {0} */", inout(reg32) acc[i], options(nostack)) };
        }
    });
}

/// `acc (+)= a · b` on a 64×256×16 tile for the whole warpgroup (128 threads), asynchronously:
/// `wgmma.mma_async.m64n256k16.f32.f16.f16`, A and B read from shared memory through the
/// descriptors `a` (K-major, see [`swizzled_descriptor`]) and `b` (N-major: row-major k×n,
/// `imm-trans-b = 1`). With `accumulate` false the old `acc` is ignored (`D = A·B`). The
/// result is there only after [`warpgroup_commit`] and [`warpgroup_wait`]. Thread `t` of the
/// warpgroup holds, in `acc[i]`, row `16·(t / 32) + (t % 32) / 4 + 8·((i / 2) % 2)`, column
/// `8·(i / 4) + 2·(t % 4) + i % 2`.
///
/// # Safety
/// `a` and `b` must describe operand tiles in this block's shared memory that the async proxy may
/// read (landed through TMA or fenced with [`fence_shared_for_async_proxy`]); all 128 threads of a
/// warpgroup must call it together, between [`warpgroup_fence`] and [`warpgroup_commit`], and must
/// not touch `acc` again before [`warpgroup_wait`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k16_f16(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
    let scale_d = accumulate as u32;
    seq!(i in 0..128 {
        unsafe {
            core::arch::asm!(
            "{{ .reg .pred accumulate;",
            "setp.ne.b32 accumulate, {scale_d}, 0;",
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{",
            "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, ",
            "{16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, ",
            "{32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, ",
            "{48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}, ",
            "{64}, {65}, {66}, {67}, {68}, {69}, {70}, {71}, {72}, {73}, {74}, {75}, {76}, {77}, {78}, {79}, ",
            "{80}, {81}, {82}, {83}, {84}, {85}, {86}, {87}, {88}, {89}, {90}, {91}, {92}, {93}, {94}, {95}, ",
            "{96}, {97}, {98}, {99}, {100}, {101}, {102}, {103}, {104}, {105}, {106}, {107}, {108}, {109}, {110}, {111}, ",
            "{112}, {113}, {114}, {115}, {116}, {117}, {118}, {119}, {120}, {121}, {122}, {123}, {124}, {125}, {126}, {127} ",
            "}}, {a}, {b}, accumulate, 1, 1, 0, 1; }}",
                #(inout(reg32) acc[i],)*
                a = in(reg64) a,
                b = in(reg64) b,
                scale_d = in(reg32) scale_d,
                options(nostack),
            )
        };
    });
}

/// One `wgmma.mma_async` m64nNk16 with A from registers, fp32 accumulators and `$ty` inputs
/// (`"f16"` or `"bf16"`): `$count` accumulators (N = 64: 32, N = 128: 64), `$shape` the
/// instruction's shape (`"m64n64k16"`), `$operands` the accumulator operands `{0}, …` as one
/// string. Hopper-only (sm_90a), like its users.
#[cfg(target_feature = "sm_90a")]
macro_rules! wgmma_register_a_asm {
    ($count:literal, $shape:literal, $ty:literal, $operands:expr, $acc:ident, $a:ident, $b:ident) => {
        seq!(i in 0..$count {
            // SAFETY: the caller of the enclosing function upholds its contract.
            unsafe {
                core::arch::asm!(
                "{{ .reg .pred accumulate;",
                "setp.eq.b32 accumulate, 1, 1;",
                concat!("wgmma.mma_async.sync.aligned.", $shape, ".f32.", $ty, ".", $ty, " {{"),
                $operands,
                // scale-d (true: accumulate), imm-scale-a, imm-scale-b, imm-trans-b.
                "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, accumulate, 1, 1, 0; }}",
                    #(inout(reg32) $acc[i],)*
                    a0 = in(reg32) $a[0],
                    a1 = in(reg32) $a[1],
                    a2 = in(reg32) $a[2],
                    a3 = in(reg32) $a[3],
                    b = in(reg64) $b,
                    options(nostack),
                )
            };
        });
    };
}

/// The 32 accumulator operands of an m64n64 `wgmma`, as one `asm!` template string.
#[cfg(target_feature = "sm_90a")]
macro_rules! accumulators_32 {
    () => {
        concat!(
            "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, \n",
            "{16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}",
        )
    };
}

/// The 64 accumulator operands of an m64n128 `wgmma`, as one `asm!` template string.
#[cfg(target_feature = "sm_90a")]
macro_rules! accumulators_64 {
    () => {
        concat!(
            accumulators_32!(),
            ", \n",
            "{32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, \n",
            "{48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}",
        )
    };
}

/// `acc += a · b` on a 64×64×16 tile for the whole warpgroup, asynchronously:
/// `wgmma.mma_async.m64n64k16.f32.{f16,bf16}.{f16,bf16}` (fp16 inputs, or bf16 with `BF16`) with
/// A from registers and B (K-major, `imm-trans-b = 0`) from shared memory through the descriptor
/// `b` (see [`swizzled_descriptor`]). Warp `w` of the warpgroup supplies rows `16·w …` of A in
/// `mma.sync`'s m16k16 fragment layout: lane `l` holds row `l / 4` (registers 0 and 2) and row
/// `l / 4 + 8` (1 and 3), k `2·(l % 4)` and the next (registers 0 and 1) and those plus 8 (2
/// and 3), two 16-bit values per register. Thread `t` holds, in `acc[i]`, row
/// `16·(t / 32) + (t % 32) / 4 + 8·((i / 2) % 2)`, column `8·(i / 4) + 2·(t % 4) + i % 2`,
/// like the other shapes.
///
/// # Safety
/// As [`wgmma_m64n256k16_f16`] for `b` and the warpgroup; the registers of `a`, like `acc`, are
/// read in the background until [`warpgroup_wait`], and a [`warpgroup_fence`] must separate
/// their writing from this call.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n64k16_register_a<const BF16: bool>(
    acc: &mut [f32; 32],
    a: &[u32; 4],
    b: u64,
) {
    if BF16 {
        wgmma_register_a_asm!(32, "m64n64k16", "bf16", accumulators_32!(), acc, a, b);
    } else {
        wgmma_register_a_asm!(32, "m64n64k16", "f16", accumulators_32!(), acc, a, b);
    }
}

/// [`wgmma_m64n64k16_register_a`] on a 64×128×16 tile (N = 128: 64 accumulators, same
/// fragment layouts).
///
/// # Safety
/// That of [`wgmma_m64n64k16_register_a`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n128k16_register_a<const BF16: bool>(
    acc: &mut [f32; 64],
    a: &[u32; 4],
    b: u64,
) {
    if BF16 {
        wgmma_register_a_asm!(64, "m64n128k16", "bf16", accumulators_64!(), acc, a, b);
    } else {
        wgmma_register_a_asm!(64, "m64n128k16", "f16", accumulators_64!(), acc, a, b);
    }
}

/// [`wgmma_m64n256k16_f16`] on a 64×128×16 tile: the accumulators are `acc[0..64]` (the rest
/// is untouched), same fragment layout.
///
/// # Safety
/// That of [`wgmma_m64n256k16_f16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n128k16_f16(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
    let scale_d = accumulate as u32;
    seq!(i in 0..64 {
        unsafe {
            core::arch::asm!(
            "{{ .reg .pred accumulate;",
            "setp.ne.b32 accumulate, {scale_d}, 0;",
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{",
            "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, ",
            "{16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, ",
            "{32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, ",
            "{48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63} ",
            "}}, {a}, {b}, accumulate, 1, 1, 0, 1; }}",
                #(inout(reg32) acc[i],)*
                a = in(reg64) a,
                b = in(reg64) b,
                scale_d = in(reg32) scale_d,
                options(nostack),
            )
        };
    });
}

/// `imm-trans-b` of a `wgmma` whose B tile is stored K-major (`[n, k]`: each of the n rows
/// holds consecutive k), the form the PTX ISA calls "column-major B" and takes untransposed.
pub const B_K_MAJOR: u32 = 0;
/// `imm-trans-b` of a `wgmma` whose B tile is stored MN-major (`[k, n]`, row-major k×n): the
/// instruction transposes it (allowed for .f16/.bf16 operands read through descriptors only).
pub const B_MN_MAJOR: u32 = 1;

/// The 128 accumulator operands `{0}, …, {127}` of a `wgmma` m64n256 with fp32 accumulators,
/// as one string for `asm!` templates (16 to a line, as separate template strings would be).
#[cfg(target_feature = "sm_90a")]
macro_rules! accumulators_128 {
    () => {
        concat!(
            "{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, \n",
            "{16}, {17}, {18}, {19}, {20}, {21}, {22}, {23}, {24}, {25}, {26}, {27}, {28}, {29}, {30}, {31}, \n",
            "{32}, {33}, {34}, {35}, {36}, {37}, {38}, {39}, {40}, {41}, {42}, {43}, {44}, {45}, {46}, {47}, \n",
            "{48}, {49}, {50}, {51}, {52}, {53}, {54}, {55}, {56}, {57}, {58}, {59}, {60}, {61}, {62}, {63}, \n",
            "{64}, {65}, {66}, {67}, {68}, {69}, {70}, {71}, {72}, {73}, {74}, {75}, {76}, {77}, {78}, {79}, \n",
            "{80}, {81}, {82}, {83}, {84}, {85}, {86}, {87}, {88}, {89}, {90}, {91}, {92}, {93}, {94}, {95}, \n",
            "{96}, {97}, {98}, {99}, {100}, {101}, {102}, {103}, {104}, {105}, {106}, {107}, {108}, {109}, {110}, {111}, \n",
            "{112}, {113}, {114}, {115}, {116}, {117}, {118}, {119}, {120}, {121}, {122}, {123}, {124}, {125}, {126}, {127} ",
        )
    };
}

/// One `wgmma.mma_async` m64nNk16 with fp32 accumulators, bf16 inputs where the `bool`
/// `$bf16` is true and fp16 where it is false, A K-major (`imm-trans-a = 0`) and the given
/// `imm-trans-b`: `$count` accumulators (N = 256: 128, N = 128: 64, N = 64: 32), `$shape` the
/// instruction's shape (`"m64n256k16"`), `$operands` the accumulator operands `{0}, …` as one
/// string. `$dir` is `inout` (the accumulators are read, then `scale-d` decides whether they
/// count) or `out` (they are only written: `scale-d` must be 0). Hopper-only (sm_90a), like
/// its users.
#[cfg(target_feature = "sm_90a")]
macro_rules! wgmma_k16_asm {
    ($count:literal, $shape:literal, $operands:expr, $bf16:ident, $dir:ident, $acc:ident, $a:ident, $b:ident, $scale_d:ident, $trans_b:ident) => {
        if $bf16 {
            wgmma_k16_asm!(@typed $count, $shape, $operands, "bf16", $dir, $acc, $a, $b, $scale_d, $trans_b);
        } else {
            wgmma_k16_asm!(@typed $count, $shape, $operands, "f16", $dir, $acc, $a, $b, $scale_d, $trans_b);
        }
    };
    (@typed $count:literal, $shape:literal, $operands:expr, $ty:literal, $dir:ident, $acc:ident, $a:ident, $b:ident, $scale_d:ident, $trans_b:ident) => {
        seq!(i in 0..$count {
            // SAFETY: the caller of the enclosing function upholds its contract.
            unsafe {
                core::arch::asm!(
                "{{ .reg .pred accumulate;",
                "setp.ne.b32 accumulate, {scale_d}, 0;",
                concat!("wgmma.mma_async.sync.aligned.", $shape, ".f32.", $ty, ".", $ty, " {{"),
                $operands,
                // scale-d (predicate), imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b.
                "}}, {a}, {b}, accumulate, 1, 1, 0, {trans_b}; }}",
                    #($dir(reg32) $acc[i],)*
                    a = in(reg64) $a,
                    b = in(reg64) $b,
                    scale_d = in(reg32) $scale_d,
                    trans_b = const $trans_b,
                    options(nostack),
                )
            };
        });
    };
}

/// One `wgmma.mma_async` m64n256 with fp32 accumulators whose operands are both K-major and
/// take no `imm-trans` arguments: `$form` is the shape and types, `"m64n256k8.f32.tf32.tf32"`
/// or `"m64n256k32.f32.e4m3.e4m3"` (and the other FP8 pairs). TF32 and FP8 `wgmma` have no
/// transposing form; `$dir` as in [`wgmma_k16_asm`].
#[cfg(target_feature = "sm_90a")]
macro_rules! wgmma_m64n256_k_major_asm {
    ($form:literal, $dir:ident, $acc:ident, $a:ident, $b:ident, $scale_d:ident) => {
        seq!(i in 0..128 {
            // SAFETY: the caller of the enclosing function upholds its contract.
            unsafe {
                core::arch::asm!(
                "{{ .reg .pred accumulate;",
                "setp.ne.b32 accumulate, {scale_d}, 0;",
                concat!("wgmma.mma_async.sync.aligned.", $form, " {{"),
                accumulators_128!(),
                // scale-d (predicate), imm-scale-a, imm-scale-b.
                "}}, {a}, {b}, accumulate, 1, 1; }}",
                    #($dir(reg32) $acc[i],)*
                    a = in(reg64) $a,
                    b = in(reg64) $b,
                    scale_d = in(reg32) $scale_d,
                    options(nostack),
                )
            };
        });
    };
}

/// `acc (+)= a · b` on a 64×256×16 tile for the whole warpgroup, asynchronously, with fp16
/// (`BF16` false) or bf16 (`BF16` true) inputs and fp32 accumulators:
/// `wgmma.mma_async.m64n256k16.f32.{f16,bf16}.{f16,bf16}`. A is read K-major through the
/// descriptor `a`; B through `b`, K-major when `TRANS_B` is [`B_K_MAJOR`] (B stored `[n, k]`)
/// or MN-major when it is [`B_MN_MAJOR`] (B stored `[k, n]`). The fragment layout of `acc`
/// and the meaning of `accumulate` are those of [`wgmma_m64n256k16_f16`], which this is with
/// `BF16 = false, TRANS_B = B_MN_MAJOR`.
///
/// # Safety
/// `a` and `b` must describe operand tiles in this block's shared memory that the async proxy
/// may read (landed through TMA or fenced with [`fence_shared_for_async_proxy`]), and the call
/// must be made by all 128 threads of a warpgroup together, between [`warpgroup_fence`] and
/// [`warpgroup_commit`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k16<const BF16: bool, const TRANS_B: u32>(
    acc: &mut [f32; 128],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let scale_d = accumulate as u32;
    wgmma_k16_asm!(
        128,
        "m64n256k16",
        accumulators_128!(),
        BF16,
        inout,
        acc,
        a,
        b,
        scale_d,
        TRANS_B
    );
}

/// [`wgmma_m64n256k16`] without accumulation (`D = A·B`) whose accumulators are outputs only:
/// the compiler sees that their old values are not needed, so they need not stay live from one
/// tile to the next (and no instruction has to zero them, which ptxas would count as writing
/// the accumulators inside the `wgmma` pipeline and serialize it).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k16_overwrite<const BF16: bool, const TRANS_B: u32>(
    acc: &mut [f32; 128],
    a: u64,
    b: u64,
) {
    let scale_d = 0u32;
    wgmma_k16_asm!(
        128,
        "m64n256k16",
        accumulators_128!(),
        BF16,
        out,
        acc,
        a,
        b,
        scale_d,
        TRANS_B
    );
}

/// [`wgmma_m64n256k16`] on a 64×64×16 tile: `wgmma.mma_async.m64n64k16` with 32 accumulators
/// per thread, the same fragment layout (column blocks j = 0..7) and descriptors (a `[k, n]` B
/// tile is one 64-column slab).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n64k16<const BF16: bool, const TRANS_B: u32>(
    acc: &mut [f32; 32],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let scale_d = accumulate as u32;
    wgmma_k16_asm!(
        32,
        "m64n64k16",
        accumulators_32!(),
        BF16,
        inout,
        acc,
        a,
        b,
        scale_d,
        TRANS_B
    );
}

/// [`wgmma_m64n64k16`]'s output-only form (see [`wgmma_m64n256k16_overwrite`]).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n64k16_overwrite<const BF16: bool, const TRANS_B: u32>(
    acc: &mut [f32; 32],
    a: u64,
    b: u64,
) {
    let scale_d = 0u32;
    wgmma_k16_asm!(
        32,
        "m64n64k16",
        accumulators_32!(),
        BF16,
        out,
        acc,
        a,
        b,
        scale_d,
        TRANS_B
    );
}

/// [`wgmma_m64n256k16`] on a 64×128×16 tile: `wgmma.mma_async.m64n128k16` with 64 accumulators
/// per thread, the same fragment layout (column blocks j = 0..15) and descriptors (a `[k, n]` B
/// tile is two 64-column slabs, a `[n, k]` one 128 rows).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n128k16<const BF16: bool, const TRANS_B: u32>(
    acc: &mut [f32; 64],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let scale_d = accumulate as u32;
    wgmma_k16_asm!(
        64,
        "m64n128k16",
        accumulators_64!(),
        BF16,
        inout,
        acc,
        a,
        b,
        scale_d,
        TRANS_B
    );
}

/// [`wgmma_m64n128k16`]'s output-only form (see [`wgmma_m64n256k16_overwrite`]).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n128k16_overwrite<const BF16: bool, const TRANS_B: u32>(
    acc: &mut [f32; 64],
    a: u64,
    b: u64,
) {
    let scale_d = 0u32;
    wgmma_k16_asm!(
        64,
        "m64n128k16",
        accumulators_64!(),
        BF16,
        out,
        acc,
        a,
        b,
        scale_d,
        TRANS_B
    );
}

/// `acc (+)= a · b` on a 64×256×8 tile for the whole warpgroup, asynchronously, with the fp32
/// operands read as TF32 (their low 13 mantissa bits ignored) and fp32 accumulators:
/// `wgmma.mma_async.m64n256k8.f32.tf32.tf32`. Both descriptors must describe K-major tiles (A
/// `[m, k]`, B `[n, k]`): TF32 `wgmma` cannot transpose. A k8 slice of fp32 is 32 bytes, like
/// a k16 slice of fp16, so the descriptors of [`wgmma_m64n256k16`] with `B_K_MAJOR` serve
/// unchanged. The fragment layout of `acc` and the meaning of `accumulate` are those of
/// [`wgmma_m64n256k16_f16`].
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k8_tf32(acc: &mut [f32; 128], a: u64, b: u64, accumulate: bool) {
    let scale_d = accumulate as u32;
    wgmma_m64n256_k_major_asm!("m64n256k8.f32.tf32.tf32", inout, acc, a, b, scale_d);
}

/// [`wgmma_m64n256k8_tf32`] without accumulation, its accumulators outputs only (see
/// [`wgmma_m64n256k16_overwrite`]).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k8_tf32_overwrite(acc: &mut [f32; 128], a: u64, b: u64) {
    let scale_d = 0u32;
    wgmma_m64n256_k_major_asm!("m64n256k8.f32.tf32.tf32", out, acc, a, b, scale_d);
}

/// `acc (+)= a · b` on a 64×256×8 tile for the whole warpgroup, asynchronously, with A from
/// registers: `wgmma.mma_async.m64n256k8.f32.tf32.tf32` whose A operand is four registers per
/// thread (the fp32 bits, read as TF32) and whose B is read K-major through the descriptor `b`.
/// Warp `w` of the warpgroup supplies rows `16·w …` of A in `mma.sync`'s m16k8 TF32 fragment
/// layout: lane `l` holds row `l / 4` (registers 0 and 2) and `l / 4 + 8` (1 and 3), k `l % 4`
/// (registers 0 and 1) and `l % 4 + 4` (2 and 3). `acc`'s layout and `accumulate` are those of
/// [`wgmma_m64n256k16_f16`].
///
/// # Safety
/// As [`wgmma_m64n256k16`] for `b` and the warpgroup; the registers of `a`, like `acc`, are read
/// in the background until [`warpgroup_wait`], and a [`warpgroup_fence`] must separate their
/// writing from this call.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k8_tf32_register_a(
    acc: &mut [f32; 128],
    a: &[u32; 4],
    b: u64,
    accumulate: bool,
) {
    let scale_d = accumulate as u32;
    seq!(i in 0..128 {
        // SAFETY: the caller's contract.
        unsafe {
            core::arch::asm!(
            "{{ .reg .pred accumulate;",
            "setp.ne.b32 accumulate, {scale_d}, 0;",
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{",
            accumulators_128!(),
            // scale-d (predicate), imm-scale-a, imm-scale-b (no imm-trans: TF32).
            "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, accumulate, 1, 1; }}",
                #(inout(reg32) acc[i],)*
                a0 = in(reg32) a[0],
                a1 = in(reg32) a[1],
                a2 = in(reg32) a[2],
                a3 = in(reg32) a[3],
                b = in(reg64) b,
                scale_d = in(reg32) scale_d,
                options(nostack),
            )
        };
    });
}

/// `acc (+)= a · b` on a 64×256×32 tile for the whole warpgroup, asynchronously, with FP8
/// operands (e5m2 when `E5M2`, else e4m3) and fp32 accumulators:
/// `wgmma.mma_async.m64n256k32.f32.{e4m3,e5m2}.{e4m3,e5m2}`. Both descriptors must describe
/// K-major tiles (A `[m, k]`, B `[n, k]`): FP8 `wgmma` cannot transpose. A k32 slice of FP8 is
/// 32 bytes, like a k16 slice of fp16, so the descriptors of [`wgmma_m64n256k16`] with
/// `B_K_MAJOR` serve unchanged. The fragment layout of `acc` and the meaning of `accumulate`
/// are those of [`wgmma_m64n256k16_f16`].
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k32_fp8<const E5M2: bool>(
    acc: &mut [f32; 128],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let scale_d = accumulate as u32;
    if E5M2 {
        wgmma_m64n256_k_major_asm!("m64n256k32.f32.e5m2.e5m2", inout, acc, a, b, scale_d);
    } else {
        wgmma_m64n256_k_major_asm!("m64n256k32.f32.e4m3.e4m3", inout, acc, a, b, scale_d);
    }
}

/// [`wgmma_m64n256k32_fp8`] without accumulation, its accumulators outputs only (see
/// [`wgmma_m64n256k16_overwrite`]).
///
/// # Safety
/// That of [`wgmma_m64n256k16`].
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
pub unsafe fn wgmma_m64n256k32_fp8_overwrite<const E5M2: bool>(
    acc: &mut [f32; 128],
    a: u64,
    b: u64,
) {
    let scale_d = 0u32;
    if E5M2 {
        wgmma_m64n256_k_major_asm!("m64n256k32.f32.e5m2.e5m2", out, acc, a, b, scale_d);
    } else {
        wgmma_m64n256_k_major_asm!("m64n256k32.f32.e4m3.e4m3", out, acc, a, b, scale_d);
    }
}
