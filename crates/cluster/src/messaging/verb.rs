//! What a message asks for.

/// A message's verb. The codes are the wire format: never reuse one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// The first frame on a connection: the sender's cluster name and address.
    Hello,
    /// Liveness: answered with an empty body.
    Echo,
    /// Apply a mutation on a replica.
    Mutation,
    /// Read data from a replica.
    ReadData,
    /// Read a digest from a replica.
    ReadDigest,
    /// A Raft message (schema and topology).
    Raft,
    /// Membership: discovery of the group, joining it, a node's status.
    Membership,
    /// Read a token range's partitions from a replica.
    RangeData,
    /// Paxos: promise a ballot.
    PaxosPrepare,
    /// Paxos: accept a proposal.
    PaxosPropose,
    /// Paxos: apply a chosen proposal.
    PaxosCommit,
    /// A counter increment's deltas, to the replica that leads it (`proxy/counter.rs`).
    CounterMutation,
}

impl Verb {
    /// The verb's wire code.
    pub fn code(self) -> u8 {
        match self {
            Verb::Hello => 1,
            Verb::Echo => 2,
            Verb::Mutation => 3,
            Verb::ReadData => 4,
            Verb::ReadDigest => 5,
            Verb::Raft => 6,
            Verb::Membership => 7,
            Verb::RangeData => 8,
            Verb::PaxosPrepare => 9,
            Verb::PaxosPropose => 10,
            Verb::PaxosCommit => 11,
            Verb::CounterMutation => 12,
        }
    }

    /// The verb's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Hello => "HELLO",
            Verb::Echo => "ECHO",
            Verb::Mutation => "MUTATION",
            Verb::ReadData => "READ_DATA",
            Verb::ReadDigest => "READ_DIGEST",
            Verb::Raft => "RAFT",
            Verb::Membership => "MEMBERSHIP",
            Verb::RangeData => "RANGE_DATA",
            Verb::PaxosPrepare => "PAXOS_PREPARE",
            Verb::PaxosPropose => "PAXOS_PROPOSE",
            Verb::PaxosCommit => "PAXOS_COMMIT",
            Verb::CounterMutation => "COUNTER_MUTATION",
        }
    }

    /// The verb's name in trace events: Cassandra 5.0's name of the request it stands for
    /// (its `Verb` enum: a digest read is a `READ_REQ` too; Paxos is Cassandra's classic
    /// protocol, `paxos_variant: v1`, 5.0's default); verbs Cassandra has no request for
    /// keep their own name.
    pub fn trace_name(self) -> &'static str {
        match self {
            Verb::Echo => "ECHO_REQ",
            Verb::Mutation => "MUTATION_REQ",
            Verb::ReadData | Verb::ReadDigest => "READ_REQ",
            Verb::RangeData => "RANGE_REQ",
            Verb::PaxosPrepare => "PAXOS_PREPARE_REQ",
            Verb::PaxosPropose => "PAXOS_PROPOSE_REQ",
            Verb::PaxosCommit => "PAXOS_COMMIT_REQ",
            Verb::CounterMutation => "COUNTER_MUTATION_REQ",
            Verb::Hello | Verb::Raft | Verb::Membership => self.name(),
        }
    }

    /// The name Cassandra 5.0 gives the answer to this verb's request in trace events
    /// ("MUTATION_RSP message received from /10.0.0.2:7000").
    pub fn response_trace_name(self) -> &'static str {
        match self {
            Verb::Echo => "ECHO_RSP",
            Verb::Mutation => "MUTATION_RSP",
            Verb::ReadData | Verb::ReadDigest => "READ_RSP",
            Verb::RangeData => "RANGE_RSP",
            Verb::PaxosPrepare => "PAXOS_PREPARE_RSP",
            Verb::PaxosPropose => "PAXOS_PROPOSE_RSP",
            Verb::PaxosCommit => "PAXOS_COMMIT_RSP",
            Verb::CounterMutation => "COUNTER_MUTATION_RSP",
            Verb::Hello | Verb::Raft | Verb::Membership => self.name(),
        }
    }

    /// The verb of a wire code.
    pub fn from_code(code: u8) -> Option<Verb> {
        Some(match code {
            1 => Verb::Hello,
            2 => Verb::Echo,
            3 => Verb::Mutation,
            4 => Verb::ReadData,
            5 => Verb::ReadDigest,
            6 => Verb::Raft,
            7 => Verb::Membership,
            8 => Verb::RangeData,
            9 => Verb::PaxosPrepare,
            10 => Verb::PaxosPropose,
            11 => Verb::PaxosCommit,
            12 => Verb::CounterMutation,
            _ => return None,
        })
    }
}
