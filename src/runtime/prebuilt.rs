//! Machine code built ahead of time for the kernels' module, for machines where the driver's
//! own compilation of the PTX takes minutes (the whole module is tens of megabytes of PTX) and
//! its cache does not survive: if [`CUBIN_DIR_VARIABLE`] names a folder holding
//! `ptxas -arch=sm_XY` output of the very PTX being loaded, the runtime loads that instead.
//!
//! The file is found by the PTX's CRC-32 and length and the device's compute capability,
//! `<crc32 as 8 hex digits>-<length>-sm_<major><minor>.cubin` (for example
//! `0123abcd-71494072-sm_90.cubin`), so a cubin of other PTX, or for another GPU, is never
//! picked by its name; one the driver refuses is passed over, and the PTX is loaded as usual.

use std::path::PathBuf;

/// The environment variable naming the folder of prebuilt cubins (unset: none are used).
pub const CUBIN_DIR_VARIABLE: &str = "RUST_GEMM_CUBIN_DIR";

/// The file name a cubin of `ptx` for compute capability `capability` has in the folder.
pub fn cubin_name(ptx: &str, capability: (i32, i32)) -> String {
    format!(
        "{:08x}-{}-sm_{}{}.cubin",
        crc32(ptx.as_bytes()),
        ptx.len(),
        capability.0,
        capability.1
    )
}

/// The path of a prebuilt cubin of `ptx` for `capability`, when [`CUBIN_DIR_VARIABLE`] is set
/// and the file exists.
pub fn find(ptx: &str, capability: (i32, i32)) -> Option<PathBuf> {
    let dir = std::env::var_os(CUBIN_DIR_VARIABLE)?;
    let path = PathBuf::from(dir).join(cubin_name(ptx, capability));
    path.is_file().then_some(path)
}

/// CRC-32 (IEEE 802.3, reflected, as zlib's `crc32`), bytewise with a 256-entry table.
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut bit = 0;
            while bit < 8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                bit += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    !bytes.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_zlib() {
        // zlib.crc32(b"123456789") and zlib.crc32(b"")
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn names_carry_checksum_length_and_capability() {
        assert_eq!(cubin_name("123456789", (9, 0)), "cbf43926-9-sm_90.cubin");
    }
}
