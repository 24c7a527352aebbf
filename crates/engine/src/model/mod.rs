//! The data model: keys and tokens, cells, rows, partitions, mutations, and how versions
//! reconcile.

pub mod cell;
pub mod clustering;
pub mod codec;
pub mod counter;
pub mod key;
pub mod mutation;
pub mod partition;
pub mod row;
pub mod token;
pub mod types;

pub use cell::{Cell, DeletionTime, LivenessInfo, NowSecs, NO_DELETION_TIME};
pub use key::{ClusteringKey, ClusteringPos, ClusteringRange, DecoratedKey, PartitionPos, Slice};
pub use mutation::Mutation;
pub use partition::{Partition, RangeTombstone};
pub use row::{CellCounts, ColumnData, ColumnId, ComplexColumn, Row};
pub use token::Token;
