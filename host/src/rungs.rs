//! The table of rungs: the single place that says which kernels exist, how each is launched and
//! what it requires. The CLI, the tests and the benches all read [`RUNGS`]; adding a rung means
//! adding its file under `kernels-gpu/src/sgemm/` and one row here.

use crate::{GemmError, GemmShape};

/// How much dynamic shared memory a rung's block needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMem {
    /// None.
    None,
    /// A fixed number of bytes, whatever the shape.
    Fixed(usize),
    /// `bytes_per_k × k` bytes: the block stages whole panels of length k.
    PerK {
        /// Bytes per unit of k.
        bytes_per_k: usize,
    },
}

/// One rung of the ladder: a kernel entry point and everything needed to launch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rung {
    /// Short name, used on the command line and in reports (`v0`, `v1`, ...).
    pub name: &'static str,
    /// The rung's idea, in a few words.
    pub idea: &'static str,
    /// The kernel's entry point in the PTX.
    pub entry: &'static str,
    /// Threads per block along x and y.
    pub block_dim: (u32, u32),
    /// Rows of C each block computes.
    pub block_tile_m: u32,
    /// Columns of C each block computes.
    pub block_tile_n: u32,
    /// Dynamic shared memory per block.
    pub shared_mem: SharedMem,
    /// Whether A and B are read with 128-bit loads, which need 16-byte-aligned base addresses.
    pub vector_loads: bool,
}

/// Every rung, in ladder order.
pub const RUNGS: &[Rung] = &[
    Rung {
        name: "v0",
        idea: "global memory",
        entry: "sgemm_v00_global_memory",
        block_dim: (32, 8),
        block_tile_m: 8,
        block_tile_n: 32,
        shared_mem: SharedMem::None,
        vector_loads: false,
    },
    Rung {
        name: "v1",
        idea: "whole panels in shared memory",
        entry: "sgemm_v01_shared_panels",
        block_dim: (8, 4),
        block_tile_m: 4,
        block_tile_n: 8,
        // A panel 4×k plus B panel k×8, in f32.
        shared_mem: SharedMem::PerK {
            bytes_per_k: (4 + 8) * 4,
        },
        vector_loads: false,
    },
    Rung {
        name: "v2",
        idea: "shared-memory tiles along k",
        entry: "sgemm_v02_shared_tiles",
        block_dim: (32, 32),
        block_tile_m: 32,
        block_tile_n: 32,
        shared_mem: SharedMem::Fixed(2 * 32 * 32 * 4),
        vector_loads: false,
    },
    Rung {
        name: "v3",
        idea: "4×4 outputs per thread",
        entry: "sgemm_v03_thread_tile",
        block_dim: (16, 16),
        block_tile_m: 64,
        block_tile_n: 64,
        shared_mem: SharedMem::Fixed(2 * 64 * 16 * 4),
        vector_loads: false,
    },
    Rung {
        name: "v4",
        idea: "float4 global loads",
        entry: "sgemm_v04_float4_loads",
        block_dim: (16, 16),
        block_tile_m: 64,
        block_tile_n: 64,
        shared_mem: SharedMem::Fixed(2 * 64 * 16 * 4),
        vector_loads: true,
    },
];

/// CUDA's limit on blocks along grid y (grid x allows 2³¹ − 1).
pub const MAX_GRID_Y: u64 = 65_535;
/// CUDA's limit on blocks along grid x.
pub const MAX_GRID_X: u64 = i32::MAX as u64;

/// Grid, block and shared memory for one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Blocks along x and y.
    pub grid: (u32, u32),
    /// Threads per block along x and y.
    pub block: (u32, u32),
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
}

impl Rung {
    /// Looks a rung up by name.
    pub fn by_name(name: &str) -> Result<&'static Rung, GemmError> {
        RUNGS
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| GemmError::UnknownRung {
                name: name.to_string(),
                known: RUNGS.iter().map(|r| r.name).collect::<Vec<_>>().join(", "),
            })
    }

    /// Dynamic shared memory for `shape`, in bytes.
    pub fn shared_mem_bytes(&self, shape: &GemmShape) -> usize {
        match self.shared_mem {
            SharedMem::None => 0,
            SharedMem::Fixed(bytes) => bytes,
            SharedMem::PerK { bytes_per_k } => bytes_per_k * shape.k,
        }
    }

    /// The launch for `shape` on a device that allows `max_shared_bytes` of shared memory per
    /// block, or the reason the rung cannot run it.
    pub fn launch(&self, shape: &GemmShape, max_shared_bytes: usize) -> Result<Launch, GemmError> {
        let needed = self.shared_mem_bytes(shape);
        if needed > max_shared_bytes {
            let max_k = match self.shared_mem {
                SharedMem::PerK { bytes_per_k } => max_shared_bytes / bytes_per_k,
                _ => 0,
            };
            return Err(GemmError::SharedMemory {
                rung: self.name,
                k: shape.k,
                needed,
                limit: max_shared_bytes,
                max_k,
            });
        }
        let blocks_x = shape.n.div_ceil(self.block_tile_n as usize) as u64;
        let blocks_y = shape.m.div_ceil(self.block_tile_m as usize) as u64;
        for (axis, blocks, limit) in [("x", blocks_x, MAX_GRID_X), ("y", blocks_y, MAX_GRID_Y)] {
            if blocks > limit {
                return Err(GemmError::GridTooLarge {
                    rung: self.name,
                    axis,
                    blocks,
                    limit,
                });
            }
        }
        Ok(Launch {
            grid: (blocks_x as u32, blocks_y as u32),
            block: self.block_dim,
            shared_mem_bytes: needed as u32,
        })
    }

    /// Checks that the base addresses of A and B suit the rung's loads.
    pub fn check_alignment(&self, a_address: u64, b_address: u64) -> Result<(), GemmError> {
        if !self.vector_loads {
            return Ok(());
        }
        for (name, address) in [("A", a_address), ("B", b_address)] {
            if address % 16 != 0 {
                return Err(GemmError::Misaligned {
                    rung: self.name,
                    name,
                    offset_bytes: address % 16,
                });
            }
        }
        Ok(())
    }
}
