//! Script paths as a person reads them: under the target's working
//! directory, relative to it (`examples/demo-server.mjs:46`, which editors
//! and terminals turn into links), instead of the URL V8 reports
//! (`file:///work/app/examples/demo-server.mjs:46`). Applied to the text
//! each human format renders; the JSON keeps the URLs.

use crate::model::RunResult;

/// The prefixes that a relative path replaces.
pub struct RelativePaths {
    prefixes: Vec<String>,
}

impl RelativePaths {
    pub fn of(result: &RunResult) -> RelativePaths {
        RelativePaths::under(result.target.cwd.as_deref())
    }

    /// Paths under `cwd`; none when it is unknown or the root.
    pub fn under(cwd: Option<&str>) -> RelativePaths {
        let Some(cwd) = cwd
            .map(|c| c.trim_end_matches('/'))
            .filter(|c| !c.is_empty())
        else {
            return RelativePaths {
                prefixes: Vec::new(),
            };
        };
        let mut prefixes = Vec::new();
        // The URL form first: `file:///dir/`, percent-encoded as V8 writes
        // it, then as written; then the bare path.
        if let Ok(url) = url::Url::from_directory_path(cwd) {
            prefixes.push(url.to_string());
        }
        prefixes.push(format!("file://{cwd}/"));
        prefixes.push(format!("{cwd}/"));
        prefixes.dedup();
        RelativePaths { prefixes }
    }

    pub fn apply(&self, text: &str) -> String {
        self.prefixes.iter().fold(text.to_string(), |text, prefix| {
            text.replace(prefix.as_str(), "")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_under_the_working_directory_become_relative() {
        let paths = RelativePaths::under(Some("/work/my app"));
        assert_eq!(
            paths.apply("allocated at file:///work/my%20app/examples/demo-server.mjs:46:12"),
            "allocated at examples/demo-server.mjs:46:12"
        );
        assert_eq!(
            paths.apply("node /work/my app/server.mjs and file:///srv/other.mjs:3"),
            "node server.mjs and file:///srv/other.mjs:3"
        );
    }

    #[test]
    fn no_directory_changes_nothing() {
        let text = "file:///work/app/a.mjs:1";
        assert_eq!(RelativePaths::under(None).apply(text), text);
        assert_eq!(RelativePaths::under(Some("/")).apply(text), text);
    }
}
