//! Progress on stderr: a bar per load cycle on a terminal, one plain line
//! per step otherwise (CI logs), never on stdout.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

use crate::cycle::CycleObserver;
use crate::model::CycleResult;
use crate::units::mb_cell;

pub struct Progress {
    bar: Mutex<Option<ProgressBar>>,
    interactive: bool,
    quiet: bool,
    /// A page's cycles: iterations of actions, not requests sent.
    pages: bool,
    /// What a server's cycle line counts: `requests`, or `calls` of a
    /// function (`leakcheck fn`).
    work: &'static str,
    /// Units the cycle under way has completed without error: what a
    /// target that dies mid-cycle served of it.
    in_cycle: AtomicU64,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            bar: Mutex::new(None),
            interactive: std::io::stderr().is_terminal(),
            quiet,
            pages: false,
            work: "requests",
            in_cycle: AtomicU64::new(0),
        }
    }

    /// Units the cycle under way completed without error so far (0
    /// between cycles).
    pub fn in_cycle(&self) -> u64 {
        self.in_cycle.load(Ordering::Relaxed)
    }

    /// Speaks of a page's iterations instead of requests.
    pub fn for_pages(mut self, pages: bool) -> Progress {
        self.pages = pages;
        self
    }

    /// Speaks of a function's calls instead of requests.
    pub fn for_calls(mut self) -> Progress {
        self.work = "calls";
        self
    }

    /// A line of its own on stderr, above any bar.
    pub fn say(&self, message: &str) {
        if self.quiet {
            return;
        }
        match self.bar.lock().expect("progress lock").as_ref() {
            Some(bar) => bar.println(message),
            None => line(message),
        }
    }

    /// Whether stderr is a terminal that shows live lines.
    pub fn is_interactive(&self) -> bool {
        self.interactive && !self.quiet
    }

    /// A status line that replaces the previous one on a terminal (a
    /// spinner's message), or a line of its own in a log.
    pub fn live(&self, message: &str) {
        if self.quiet {
            return;
        }
        if !self.interactive {
            line(message);
            return;
        }
        let mut bar = self.bar.lock().expect("progress lock");
        let bar = bar.get_or_insert_with(|| {
            let spinner = ProgressBar::new_spinner();
            spinner.set_style(
                ProgressStyle::with_template("{spinner} {wide_msg}").expect("constant template"),
            );
            spinner.enable_steady_tick(std::time::Duration::from_millis(250));
            spinner
        });
        bar.set_message(message.to_string());
    }

    /// Ends a live status line, leaving its last text.
    pub fn end_live(&self) {
        if let Some(bar) = self.bar.lock().expect("progress lock").take() {
            bar.finish();
        }
    }

    fn finish_bar(&self) {
        if let Some(bar) = self.bar.lock().expect("progress lock").take() {
            bar.finish_and_clear();
        }
    }
}

/// One progress line on stderr. A line nobody can read any more (the
/// reader of a pipe went away: an MCP call cancelled, a log tool ended)
/// is dropped, where `eprintln!` would panic and end the run before it
/// stops its target and writes what it measured.
fn line(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{message}");
}

impl CycleObserver for Progress {
    fn phase(&self, route: &str, message: &str) {
        if !self.quiet && !self.interactive {
            line(&format!("{route}: {message}"));
        }
    }

    fn load_started(&self, route: &str, cycle: u32, cycles: u32, total: Option<u64>) {
        self.in_cycle.store(0, Ordering::Relaxed);
        if self.quiet {
            return;
        }
        let of = match cycles {
            0 => "auto".to_string(),
            n => n.to_string(),
        };
        if !self.interactive {
            let doing = if self.pages {
                "running the actions"
            } else {
                "sending load"
            };
            line(&format!("{route}: cycle {cycle}/{of}: {doing}"));
            return;
        }
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        let template = if self.pages {
            "{prefix:>16} [{bar:30}] {pos}/{len} iterations {per_sec} {msg}"
        } else {
            "{prefix:>16} [{bar:30}] {pos}/{len} requests {per_sec} {msg}"
        };
        let style = ProgressStyle::with_template(template)
            .expect("constant template")
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(format!("{route} {cycle}/{of}"));
        *self.bar.lock().expect("progress lock") = Some(bar);
    }

    fn load_progress(&self, completed: u64, errors: u64) {
        self.in_cycle
            .store(completed.saturating_sub(errors), Ordering::Relaxed);
        if let Some(bar) = self.bar.lock().expect("progress lock").as_ref() {
            bar.set_position(completed);
            if errors > 0 {
                bar.set_message(format!("{errors} errors"));
            }
        }
    }

    fn cycle_done(&self, route: &str, result: &CycleResult) {
        self.in_cycle.store(0, Ordering::Relaxed);
        self.finish_bar();
        if self.pages {
            self.say(&format!(
                "{route}: cycle {} done: {} iterations ({} failed) in {:.2} s; after GC heapUsed {} MB, arrayBuffers {} MB, renderer rss {} MB",
                result.cycle,
                result.requests,
                result.errors,
                result.duration_s,
                mb_cell(result.after_gc.heap_used),
                mb_cell(result.after_gc.array_buffers),
                mb_cell(result.after_gc.rss)
            ));
            return;
        }
        self.say(&format!(
            "{route}: cycle {} done: {} {} ({} errors, {} non-2xx) in {:.2} s; after GC heapUsed {} MB, rss {} MB",
            result.cycle,
            result.requests,
            self.work,
            result.errors,
            result.non_2xx,
            result.duration_s,
            mb_cell(result.after_gc.heap_used),
            mb_cell(result.after_gc.rss)
        ));
    }
}
