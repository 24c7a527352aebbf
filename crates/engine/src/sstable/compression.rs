//! PLACEHOLDER — replaced by the compression work (helper-b).
/// Codec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Codec { None, Lz4, Snappy, Deflate, Zstd { level: i32 } }
/// Params.
#[derive(Debug, Clone, PartialEq)]
pub struct CompressionParams { pub codec: Codec, pub chunk_length: u32, pub crc_check_chance: f64 }
impl Default for CompressionParams { fn default() -> Self { CompressionParams { codec: Codec::Lz4, chunk_length: 4096, crc_check_chance: 1.0 } } }
impl CompressionParams {
    /// from
    pub fn from_options(_o: &[(String, String)]) -> Result<CompressionParams, crate::OptionError> { Ok(Self::default()) }
    /// to
    pub fn to_options(&self) -> Vec<(String, String)> { vec![] }
}
