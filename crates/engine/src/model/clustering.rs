//! PLACEHOLDER — replaced by the types work (helper-a).
use super::key::{ClusteringKey, COMPONENT_MARKER};
use super::types::CqlType;
use bytes::Bytes;
/// Order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    Asc,
    Desc,
}
/// Layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClusteringLayout {
    pub columns: Vec<(CqlType, Order)>,
}
impl ClusteringLayout {
    /// enc
    pub fn encode_prefix(&self, values: &[&[u8]]) -> crate::Result<Vec<u8>> {
        let mut out = Vec::new();
        for (v, (_, o)) in values.iter().zip(&self.columns) {
            out.push(COMPONENT_MARKER);
            let mut body: Vec<u8> = Vec::new();
            for &b in v.iter() {
                if b == 0 {
                    body.extend([0, 0xFF])
                } else {
                    body.push(b)
                }
            }
            body.extend([0, 0]);
            if *o == Order::Desc {
                for b in &mut body {
                    *b = !*b
                }
            }
            out.extend(body);
        }
        Ok(out)
    }
    /// enc
    pub fn encode_key(&self, values: &[&[u8]]) -> crate::Result<ClusteringKey> {
        Ok(ClusteringKey(Bytes::from(self.encode_prefix(values)?)))
    }
}
