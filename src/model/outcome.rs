//! How a run ended and how its target was stopped. A run that failed or
//! was interrupted still carries every reading taken before.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeStatus {
    /// Every route ran every cycle.
    #[default]
    Complete,
    /// Ctrl-C or SIGTERM stopped the run.
    Interrupted,
    /// An error stopped the run (the target exited, a step failed).
    Failed,
}

impl OutcomeStatus {
    pub fn name(self) -> &'static str {
        match self {
            OutcomeStatus::Complete => "complete",
            OutcomeStatus::Interrupted => "interrupted",
            OutcomeStatus::Failed => "failed",
        }
    }
}

impl std::fmt::Display for OutcomeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub status: OutcomeStatus,
    pub error: Option<String>,
    /// The target's last output lines, kept when something went wrong.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_output: Vec<String>,
    /// How the target was stopped, when leakcheck launched it.
    pub target_stopped: Option<Stopped>,
    /// Whether the URL's port was free again after the target stopped.
    pub port_freed: Option<bool>,
}

/// How a process ended: its exit code, or the signal that ended it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.exit_code, self.signal) {
            (Some(code), _) => write!(f, "exit code {code}"),
            (None, Some(signal)) => write!(f, "signal {signal}"),
            (None, None) => f.write_str("an unknown status"),
        }
    }
}

/// How leakcheck stopped a target it launched. In the JSON:
/// `{"how": "terminated", "signal": 15}`, `{"how": "killed"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum Stopped {
    /// It had already exited on its own.
    AlreadyExited(ExitStatus),
    /// It ended within the grace period after SIGTERM.
    Terminated(ExitStatus),
    /// It ignored SIGTERM for the whole grace period and got SIGKILL.
    Killed,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::AlreadyExited(status) => write!(f, "had already exited ({status})"),
            Stopped::Terminated(status) => write!(f, "stopped by SIGTERM ({status})"),
            Stopped::Killed => f.write_str("killed after ignoring SIGTERM"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_reads_as_an_object() {
        let stopped = Stopped::Terminated(ExitStatus {
            exit_code: None,
            signal: Some(15),
        });
        let json = serde_json::to_string(&stopped).unwrap();
        assert_eq!(json, r#"{"how":"terminated","signal":15}"#);
        assert_eq!(serde_json::from_str::<Stopped>(&json).unwrap(), stopped);
        assert_eq!(
            serde_json::to_string(&Stopped::Killed).unwrap(),
            r#"{"how":"killed"}"#
        );
    }
}
