//! The JSON result: the model as is, pretty-printed. Its fields are
//! documented in the book (docs/src/reports.md, "JSON result").

use super::Exporter;
use crate::model::RunResult;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, result: &RunResult) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(result)? + "\n")
    }
}
