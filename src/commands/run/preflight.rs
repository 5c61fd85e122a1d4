//! What is checked before the target starts, so that minutes of load are
//! never lost to a mistake in a flag: every report path can be written,
//! the `--baseline` parses, the `--snapshots` directory exists (it is
//! created with mode 0700 when it does not), and a `--scenario` file is
//! whole and valid.

use anyhow::Context;

use crate::cli::RunProps;
use crate::model::RunResult;
use crate::report::baseline::load_result;

/// Checks the outputs and returns the parsed baseline, if one was given.
pub(super) fn check_outputs(
    output: &crate::cli::OutputProps,
    snapshots: Option<&std::path::Path>,
) -> anyhow::Result<Option<RunResult>> {
    let files = [
        ("--json", &output.json),
        ("--html", &output.html),
        ("--markdown", &output.markdown),
    ];
    for (flag, target) in files {
        if let Some(target) = target {
            target.check_writable(flag)?;
        }
    }
    if let Some(dir) = snapshots {
        crate::private_file::private_dir(dir)
            .with_context(|| format!("--snapshots {} cannot be used", dir.display()))?;
    }
    output
        .baseline
        .as_deref()
        .map(|path| load_result(path).context("--baseline is checked before the run"))
        .transpose()
}

/// Reads and checks `--scenario` before the target starts.
pub(super) fn load_scenario(
    props: &RunProps,
    http: &crate::net::HttpTarget,
) -> anyhow::Result<Option<std::sync::Arc<crate::load::Scenario>>> {
    let Some(path) = &props.request.scenario else {
        return Ok(None);
    };
    if !props.routes.is_empty() {
        anyhow::bail!("--scenario names its own paths: drop --route");
    }
    let scenario = crate::load::Scenario::load(path, &http.host).map_err(anyhow::Error::msg)?;
    Ok(Some(std::sync::Arc::new(scenario)))
}
