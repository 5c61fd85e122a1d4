//! The frame around the method's loop, one for `run`, `soak` and `page`:
//! the outputs checked before anything starts, the measuring raced against
//! Ctrl-C/SIGTERM and a target that dies, the target stopped by PID, the
//! outcome recorded with partial routes marked, the release baseline
//! compared, every report written, and the exit code. Whatever happens
//! after launch, the readings taken so far are reported.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::sync::watch;

pub use super::exit::RunEnd;
use super::outcome::{
    apply_peak_gate, judge_unjudged_routes, mark_partial_routes, outcome_of, run_end,
};
use super::signals::{StopSignal, exit_on_a_later_signal, stop_signal};
use crate::model::{RunResult, Stopped};
use crate::process::Target;
use crate::report::OutputProps;
use crate::report::baseline::load_result;
use crate::report::progress::Progress;

/// How long a run whose target is exiting may take to fail on its own.
const FAULT_GRACE: Duration = Duration::from_millis(500);

/// What the measuring returned, or the signal that cut it short.
pub type Measured = Result<anyhow::Result<()>, StopSignal>;

pub struct Frame {
    pub progress: Progress,
    output: OutputProps,
    /// The parsed `--baseline`, read before the target starts.
    previous: Option<RunResult>,
    started: Instant,
}

impl Frame {
    /// Checks every output before the target starts, so that minutes of
    /// load are never lost to a mistake in a flag: every report path can
    /// be written, the `--baseline` parses, the `--snapshots` directory
    /// exists (created with mode 0700 when it does not).
    /// `page`: this run checks a browser page (a baseline must too).
    pub fn open(
        output: &OutputProps,
        snapshots: Option<&std::path::Path>,
        quiet: bool,
        page: bool,
    ) -> anyhow::Result<Frame> {
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
        for (flag, dir) in [
            ("--issue-draft", &output.issue_draft),
            ("--evidence", &output.evidence),
        ] {
            if let Some(dir) = dir {
                std::fs::create_dir_all(dir).with_context(|| {
                    format!(
                        "{flag} {} cannot be created: give a writable folder",
                        dir.display()
                    )
                })?;
            }
        }
        if let Some(dir) = snapshots {
            crate::private_file::private_dir(dir)
                .with_context(|| format!("--snapshots {} cannot be used", dir.display()))?;
        }
        let previous = output
            .baseline
            .as_deref()
            .map(|path| load_result(path).context("--baseline is checked before the run"))
            .transpose()?;
        if let (Some(previous), Some(path)) = (&previous, &output.baseline)
            && (previous.settings.method == "page") != page
        {
            let (was, is) = match page {
                true => ("a server check (`leakcheck run`)", "a page check"),
                false => ("a page check (`leakcheck page`)", "a server check"),
            };
            anyhow::bail!(
                "--baseline {path} is the result of {was}, and this is {is}: give a result of the \
                 same kind"
            );
        }
        Ok(Frame {
            progress: Progress::new(quiet).for_pages(page),
            output: output.clone(),
            previous,
            started: Instant::now(),
        })
    }

    /// Runs the measuring until it ends, a stop signal arrives, or the
    /// target reports a fault (it exited or started exiting: it will not
    /// answer again). After an interruption a later signal exits at once.
    /// Progress in a function's calls (`leakcheck fn`).
    pub fn counting_calls(mut self) -> Frame {
        let progress = std::mem::replace(&mut self.progress, Progress::new(true));
        self.progress = progress.for_calls();
        self
    }

    pub async fn guard(
        &self,
        work: impl Future<Output = anyhow::Result<()>>,
        faults: Option<&mut watch::Receiver<Option<String>>>,
    ) -> Measured {
        let mut work = std::pin::pin!(work);
        let fault = async {
            match faults {
                Some(receiver) => match receiver.wait_for(Option::is_some).await {
                    Ok(message) => message.clone().unwrap_or_default(),
                    Err(_) => std::future::pending().await,
                },
                None => std::future::pending().await,
            }
        };
        let measured = tokio::select! {
            outcome = &mut work => Ok(outcome),
            signal = stop_signal() => Err(signal),
            message = fault => {
                // Its own error says more (which step, which cycle), if it comes soon.
                match tokio::time::timeout(FAULT_GRACE, &mut work).await {
                    Ok(outcome) => Ok(outcome),
                    Err(_) => Ok(Err(anyhow::anyhow!("{message}"))),
                }
            }
        };
        if measured.is_err() {
            exit_on_a_later_signal();
        }
        measured
    }

    /// Stops the target by PID (`what` names it in the progress line).
    pub async fn stop(&self, target: Option<&mut Target>, what: &str) -> Option<Stopped> {
        let target = target?;
        self.progress
            .say(&format!("stopping {what} (pid {})", target.pid));
        Some(target.stop().await)
    }

    /// Records how the run ended, with the routes it cut short marked.
    pub fn record(
        &self,
        result: &mut RunResult,
        measured: Measured,
        target: Option<&Target>,
        stopped: Option<Stopped>,
    ) {
        result.outcome = outcome_of(measured, target, stopped.as_ref());
        result.outcome.target_stopped = stopped;
        mark_partial_routes(result);
        apply_peak_gate(result);
    }

    /// Compares with the baseline, writes every report, and says how the
    /// run ended.
    pub fn close(self, mut result: RunResult) -> anyhow::Result<RunEnd> {
        self.progress.say(&format!(
            "done in {:.2} s",
            self.started.elapsed().as_secs_f64()
        ));
        judge_unjudged_routes(&mut result);
        crate::known::recognise_all(&mut result);
        if result.settings.invocation.is_none() {
            result.settings.invocation = Some(super::exports::invocation());
        }
        if let (Some(previous), Some(path)) = (&self.previous, &self.output.baseline) {
            result.comparison = Some(crate::report::baseline::compare(
                previous,
                &result,
                path,
                self.output.tolerance,
            ));
        }
        crate::report::emit_all(&result, &self.output)?;
        super::exports::write_exports(&result, &self.output, &|m| self.progress.say(m))?;
        if let Some(error) = &result.outcome.error {
            eprintln!("error: {error}");
        }
        Ok(run_end(&result))
    }
}
