//! PLACEHOLDER — replaced by the types work (helper-a).
/// CQL types.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CqlType { Ascii, Bigint, Blob, Boolean, Counter, Date, Decimal, Double, Duration, Float, Inet, Int, Smallint, Text, Time, Timestamp, Timeuuid, Tinyint, Uuid, Varint, List(Box<CqlType>), Set(Box<CqlType>), Map(Box<CqlType>, Box<CqlType>), Tuple(Vec<CqlType>), Frozen(Box<CqlType>) }
impl CqlType {
    /// name
    pub fn name(&self) -> String { format!("{self:?}").to_lowercase() }
    /// parse
    pub fn parse(s: &str) -> Option<CqlType> { match s { "int" => Some(CqlType::Int), "text" => Some(CqlType::Text), "bigint" => Some(CqlType::Bigint), "blob" => Some(CqlType::Blob), _ => None } }
    /// validate
    pub fn validate(&self, _v: &[u8]) -> crate::Result<()> { Ok(()) }
}
