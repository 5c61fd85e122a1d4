//! What `run` checks before the target starts besides the outputs (the
//! frame checks those): a `--scenario` file is whole and valid.

use crate::settings::RunSettings;

/// Reads and checks `--scenario` before the target starts.
pub(super) fn load_scenario(
    props: &RunSettings,
    http: &crate::net::HttpTarget,
) -> anyhow::Result<Option<std::sync::Arc<crate::load::Scenario>>> {
    let Some(path) = &props.load.request.scenario else {
        return Ok(None);
    };
    if !props.load.routes.is_empty() {
        anyhow::bail!("--scenario names its own paths: drop --route");
    }
    // -H applies to every step (an Authorization for the whole scenario).
    let scenario = crate::load::Scenario::load_with(path, &http.host, &props.load.request.headers)?;
    Ok(Some(std::sync::Arc::new(scenario)))
}
