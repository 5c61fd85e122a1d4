//! A parsed snapshot with the analyses every report needs: the dominator
//! tree (and retained sizes) and the distances and paths from the roots.

use std::io::Read;

use super::dominators::Dominators;
use super::graph::HeapGraph;
use super::parse::{SnapshotParseError, parse};
use super::paths::Paths;

/// A parsed snapshot with its dominators and paths.
pub struct Analysis {
    pub graph: HeapGraph,
    pub dominators: Dominators,
    pub paths: Paths,
}

impl Analysis {
    pub fn new(mut graph: HeapGraph) -> Analysis {
        // The reverse index is consumed (and freed) by the dominators,
        // before the paths are computed, to keep the peak low.
        let retainers = graph.take_retainers();
        let dominators = Dominators::compute(&graph, retainers);
        let paths = Paths::compute(&graph);
        Analysis {
            graph,
            dominators,
            paths,
        }
    }
}

/// Parses and analyses a snapshot from any reader.
pub fn analyse<R: Read>(reader: R) -> Result<Analysis, SnapshotParseError> {
    Ok(Analysis::new(parse(reader)?))
}
