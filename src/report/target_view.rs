//! The target as every report names it. A server: the command leakcheck
//! launched (or the URL it attached to), its pid and Node version. A page:
//! the browser and its version and the page's URL; the browser's whole
//! command line (flags, profile folder) stays in the JSON's
//! `target.command`, where a script can read it.

use crate::model::{RunResult, TargetInfo};

/// What the target is, in one line without the probe: `node
/// examples/demo-server.mjs (pid 4242, Node v24.22.3)`, `page
/// http://127.0.0.1:8080/ in Chrome/156.0.8078.114 (pid 4242)`.
pub fn target_text(result: &RunResult) -> String {
    describe(&result.target, result.settings.runtime() == "browser")
}

fn describe(target: &TargetInfo, page: bool) -> String {
    let pid = target.pid.map_or("?".into(), |p| p.to_string());
    let version = target.node_version.as_deref().unwrap_or("?");
    let runtime = match &target.runtime {
        Some(runtime) => runtime.clone(),
        None => format!("Node {version}"),
    };
    if page {
        return format!("page {} in {version} (pid {pid})", target.url);
    }
    let what = match target.command.is_empty() {
        true => target.url.clone(),
        false => target.command.join(" "),
    };
    format!("{what} (pid {pid}, {runtime})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_named_by_its_url_and_browser_not_its_command_line() {
        let mut target = TargetInfo {
            url: "http://127.0.0.1:8080/".into(),
            command: vec!["/usr/bin/chromium".into(), "--headless=new".into()],
            node_version: Some("Chrome/156.0.8078.114".into()),
            pid: Some(7),
            ..TargetInfo::default()
        };
        let text = describe(&target, true);
        assert_eq!(
            text,
            "page http://127.0.0.1:8080/ in Chrome/156.0.8078.114 (pid 7)"
        );
        target.command = vec!["node".into(), "server.mjs".into()];
        target.node_version = Some("v24.22.3".into());
        assert_eq!(
            describe(&target, false),
            "node server.mjs (pid 7, Node v24.22.3)"
        );
    }
}
