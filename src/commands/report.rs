//! `leakcheck report`: render a saved result again, optionally compared with
//! a baseline. Exits 1 when a route regressed against the baseline.

use crate::report::baseline::load_result;
use crate::report::{attach_comparison, emit_all};
use crate::settings::{ReportProps, ReportSource};

use super::frame::RunEnd;

pub async fn run(props: ReportProps) -> anyhow::Result<RunEnd> {
    let merged = matches!(props.source, ReportSource::Merge(_));
    let mut result = match &props.source {
        ReportSource::Result(path) => load_result(path)?,
        ReportSource::Merge(paths) => crate::report::merge::merge_files(paths)?,
    };
    // A result saved before an entry was added is recognised now.
    crate::known::recognise_all(&mut result);
    attach_comparison(&mut result, &props.output)?;
    emit_all(&result, &props.output)?;
    super::exports::write_exports(&result, &props.output, &|m| {
        crate::report::to_stderr(&format!("{m}\n"))
    })?;
    if merged {
        // The exit code the whole run would have had.
        return Ok(super::outcome::run_end(&result));
    }
    let regressed = result
        .comparison
        .as_ref()
        .is_some_and(|c| c.regressions().next().is_some());
    Ok(if regressed {
        RunEnd::Leak
    } else {
        RunEnd::Clean
    })
}
