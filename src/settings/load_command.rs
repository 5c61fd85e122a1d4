//! `leakcheck load`'s settings.

use super::RequestProps;
use crate::report::OutputTarget;

/// Everything `leakcheck load` needs, free of clap.
#[derive(Debug, Clone)]
pub struct LoadProps {
    pub url: String,
    pub connections: usize,
    pub stop: crate::load::Stop,
    pub rate: Option<f64>,
    /// Extra routes with their weights.
    pub routes: Vec<(String, u32)>,
    pub request: RequestProps,
    pub json: Option<OutputTarget>,
    pub allow_remote: bool,
    pub quiet: bool,
}
