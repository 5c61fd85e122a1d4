//! `leakcheck bisect`: which commit, package version or Node release
//! brought a leak in. Bisect drives checks; it is not one: each step runs
//! the check the user typed (`run …`, `fn …`, `page …`) as a child
//! leakcheck in a tree of its own (`workspace.rs`) and reads the verdict
//! from its JSON (`step.rs`); the halving is `search.rs`.
//!
//! The story of a bisect:
//! 1. list the candidates, clean end first (`candidates.rs`);
//! 2. check the leaking end in full, then the clean end with the budget
//!    its bytes per unit sets, and stop if they do not differ;
//! 3. halve the range, skipping what cannot be judged;
//! 4. check the answer again with the diagnosis, and the last clean
//!    candidate again: a reading its rerun contradicts is noise, rerun
//!    once more and reported;
//! 5. say what the first bad candidate changed (`facts.rs`).

pub mod candidates;
mod facts;
mod plan;
pub mod search;
pub mod step;
pub mod workspace;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::bail;

use crate::model::{
    BisectKind, BisectReport, BisectStatus, BisectStep, Direction, Reading, StepRole, short_id,
};
use crate::settings::BisectProps;
use plan::{Plan, plan};
use search::Search;
use step::{Budget, Cache, Checked};

/// Set by Ctrl-C or SIGTERM. The step running then gets the signal too
/// (it is in the same process group) and stops its target; the bisect
/// stops after it and still reports the steps taken.
static STOPPING: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOPPING.store(true, Ordering::SeqCst);
}

fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// Runs a bisect in the folder `app` (the repository or the app) and
/// answers. `say` reports progress.
pub fn run(props: &BisectProps, app: &Path, say: &dyn Fn(&str)) -> anyhow::Result<BisectReport> {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_stop_signal as *const () as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGTERM,
            on_stop_signal as *const () as libc::sighandler_t,
        );
    }
    let started = Instant::now();
    let check = checked_command(&props.check)?;
    let plan = plan(props, app, say)?;
    let mut bisect = Bisect {
        plan,
        check,
        install: format!("{:?}", props.install),
        cache: Cache::open(props.use_cache),
        steps: Vec::new(),
        say,
    };
    let mut report = bisect.search()?;
    report.total_seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The check each step runs, without a `--json` of the user's (each step
/// writes its own).
fn checked_command(check: &[String]) -> anyhow::Result<Vec<String>> {
    let Some(sub) = check.first().filter(|s| step::CHECKS.contains(&s.as_str())) else {
        bail!(
            "after `--` give the check each step runs, as typed after `leakcheck`: `run …`, `fn …` \
             or `page …` (got `{}`)",
            check.join(" ")
        );
    };
    let mut out = vec![sub.clone()];
    let mut rest = check[1..].iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            out.push(arg.clone());
            out.extend(rest.by_ref().cloned());
            break;
        }
        if arg == "--json" {
            rest.next();
            continue;
        }
        if !arg.starts_with("--json=") {
            out.push(arg.clone());
        }
    }
    Ok(out)
}

struct Bisect<'a> {
    plan: Plan,
    check: Vec<String>,
    install: String,
    cache: Cache,
    steps: Vec<BisectStep>,
    say: &'a dyn Fn(&str),
}

impl Bisect<'_> {
    fn search(&mut self) -> anyhow::Result<BisectReport> {
        let last = self.plan.candidates.len() - 1;
        let far = self.step(last, StepRole::End, &Budget::from_leak(None))?;
        let budget = Budget::from_leak(far.bytes_per_unit.filter(|_| far.reading == Reading::Leak));
        if stopping() {
            return Ok(self.stopped(Direction::Introduced, &Search::new(2)));
        }
        let near = self.step(0, StepRole::End, &budget)?;
        let direction = match (near.reading, far.reading) {
            (Reading::Clean, Reading::Leak) => Direction::Introduced,
            (Reading::Leak, Reading::Clean) if self.plan.kind != BisectKind::Commits => {
                Direction::Fixed
            }
            _ => return Ok(self.ends_disagree(&near, &far)),
        };
        // The search reads "like the far end" as its leak.
        let changed = |reading: Reading| match (direction, reading) {
            (_, Reading::Skip) => Reading::Skip,
            (Direction::Introduced, r) => r,
            (Direction::Fixed, Reading::Leak) => Reading::Clean,
            (Direction::Fixed, Reading::Clean) => Reading::Leak,
        };
        let budget = match direction {
            Direction::Introduced => budget,
            Direction::Fixed => Budget::from_leak(near.bytes_per_unit),
        };
        let mut search = Search::new(self.plan.candidates.len());
        while let Some(index) = search.next() {
            if stopping() {
                return Ok(self.stopped(direction, &search));
            }
            let checked = self.step(index, StepRole::Search, &budget)?;
            search.record(index, changed(checked.reading));
        }
        if stopping() {
            return Ok(self.stopped(direction, &search));
        }
        let mut noise = Vec::new();
        let confirmed = self.confirm(&search, direction, &budget, &mut noise)?;
        let mut report = self.report(direction, &search, noise);
        report.status = match search.undecided().is_empty() {
            true => BisectStatus::Found,
            false => BisectStatus::Range,
        };
        if let Some(result) = confirmed.result.as_ref() {
            report.diagnosis = facts::diagnosis(result);
        }
        let first = &self.plan.candidates[search.first_leak()];
        let before = &self.plan.candidates[search.last_clean()];
        match self.plan.kind {
            BisectKind::Commits => {
                let repo = self
                    .plan
                    .repo
                    .as_deref()
                    .expect("a commit bisect has a repository");
                report.commit =
                    facts::commit(repo, &before.id, &first.id, report.diagnosis.as_ref());
            }
            kind => report.release = Some(facts::release(kind, &self.plan.subject, &first.id)),
        }
        Ok(report)
    }

    /// The answer checked again with the diagnosis, and the last clean
    /// candidate again (when a search step read it): a rerun that
    /// contradicts is noise, settled by one more run.
    fn confirm(
        &mut self,
        search: &Search,
        direction: Direction,
        budget: &Budget,
        noise: &mut Vec<String>,
    ) -> anyhow::Result<Checked> {
        let (first, before) = (search.first_leak(), search.last_clean());
        // The leaking side of the change is checked with the diagnosis:
        // the first bad candidate, or for a fix the last one that leaks.
        let (leaking, other) = match direction {
            Direction::Introduced => (first, before),
            Direction::Fixed => (before, first),
        };
        let diagnosed = self.confirm_one(leaking, Reading::Leak, &Budget::full(), budget, noise)?;
        // The other side again, unless it is an end already checked.
        if other > 0 && other < self.plan.candidates.len() - 1 {
            self.confirm_one(other, Reading::Clean, budget, budget, noise)?;
        }
        Ok(diagnosed)
    }

    /// Checks `index` again; when it reads otherwise than `expected`, once
    /// more (`budget`), and the disagreement is reported as noise.
    fn confirm_one(
        &mut self,
        index: usize,
        expected: Reading,
        first: &Budget,
        budget: &Budget,
        noise: &mut Vec<String>,
    ) -> anyhow::Result<Checked> {
        let rerun = self.step(index, StepRole::Confirm, first)?;
        if rerun.reading == expected || rerun.reading == Reading::Skip {
            return Ok(rerun);
        }
        let again = self.step(index, StepRole::Confirm, budget)?;
        noise.push(self.noise_text(index, rerun.reading, again.reading));
        Ok(if again.reading == expected {
            again
        } else {
            rerun
        })
    }

    fn noise_text(&self, index: usize, rerun: Reading, again: Reading) -> String {
        let candidate = &self.plan.candidates[index];
        format!(
            "{} read otherwise on its rerun ({}), then {} on one more",
            short_id(&candidate.id),
            rerun.word(),
            again.word()
        )
    }

    /// Checks one candidate (or reads its cached reading) and logs it.
    fn step(&mut self, index: usize, role: StepRole, budget: &Budget) -> anyhow::Result<Checked> {
        let candidate = self.plan.candidates[index].clone();
        let joined = self.check.join("\u{1f}");
        let kind = format!("{:?}", self.plan.kind);
        let key = Cache::key(&[&kind, &candidate.id, &joined, &self.install], budget);
        let cached = match role {
            StepRole::Confirm => None,
            _ => self.cache.get(&key),
        };
        let from_cache = cached.is_some();
        let checked = match cached {
            Some(checked) => checked,
            None => {
                (self.say)(&format!(
                    "{} {}: preparing and checking",
                    role_word(role),
                    short_id(&candidate.id)
                ));
                match self.plan.workspace.prepare(&candidate) {
                    Ok(tree) => step::check(&self.check, &tree, budget),
                    Err(why) => Checked::skipped(why, 0.0),
                }
            }
        };
        if !from_cache {
            self.cache.put(&key, &checked);
        }
        (self.say)(&format!(
            "{} {}: {}{}",
            role_word(role),
            short_id(&candidate.id),
            checked.reading.word(),
            checked
                .why
                .as_deref()
                .map_or(String::new(), |w| format!(" ({w})"))
        ));
        self.steps.push(BisectStep {
            candidate: candidate.id,
            label: candidate.label,
            role,
            reading: checked.reading,
            verdict: checked.verdict.clone(),
            bytes_per_unit: checked.bytes_per_unit,
            seconds: checked.seconds,
            cached: from_cache,
            why: checked.why.clone(),
        });
        Ok(checked)
    }

    fn report(&self, direction: Direction, search: &Search, noise: Vec<String>) -> BisectReport {
        let id = |i: usize| self.plan.candidates[i].id.clone();
        BisectReport {
            kind: self.plan.kind,
            subject: self.plan.subject.clone(),
            direction,
            status: BisectStatus::Found,
            check: self.check.clone(),
            candidates: self.plan.candidates.len(),
            first: Some(id(search.first_leak())),
            last_before: Some(id(search.last_clean())),
            could_be: search.undecided().into_iter().map(id).collect(),
            steps: self.steps.clone(),
            diagnosis: None,
            commit: None,
            release: None,
            noise,
            message: None,
            total_seconds: 0.0,
        }
    }

    /// What a signal left: the steps so far, and the range still open.
    fn stopped(&self, direction: Direction, search: &Search) -> BisectReport {
        let mut report = self.report(direction, search, Vec::new());
        report.status = BisectStatus::Stopped;
        report.first = None;
        report.message = Some(format!(
            "stopped by a signal after {} steps; the first change lies after {} and at or before {}",
            self.steps.len(),
            short_id(&self.plan.candidates[search.last_clean()].id),
            short_id(&self.plan.candidates[search.first_leak()].id)
        ));
        report
    }

    /// The ends read alike (or one could not be judged): what to change.
    fn ends_disagree(&self, near: &Checked, far: &Checked) -> BisectReport {
        let (near_name, far_name) = match self.plan.kind {
            BisectKind::Commits => ("--good", "--bad"),
            _ => ("--from", "--to"),
        };
        let reading = |c: &Checked| {
            let mut text = c.reading.word().to_string();
            if let Some(why) = &c.why {
                text.push_str(&format!(" ({why})"));
            }
            text
        };
        let message = format!(
            "{near_name} reads {} and {far_name} reads {}: a bisect needs one end clean and the \
             other leaking under the same check; {}",
            reading(near),
            reading(far),
            match (near.reading, far.reading) {
                (Reading::Leak, Reading::Leak) => format!("give an earlier {near_name}"),
                (Reading::Clean, Reading::Clean) => format!(
                    "check that {far_name} leaks under this check (the same route and settings)"
                ),
                _ => "fix what stops the check there, or choose another end".into(),
            }
        );
        let mut report = self.report(Direction::Introduced, &Search::new(2), Vec::new());
        report.status = BisectStatus::EndsDisagree;
        report.first = None;
        report.last_before = None;
        report.message = Some(message);
        report
    }
}

fn role_word(role: StepRole) -> &'static str {
    match role {
        StepRole::End => "end",
        StepRole::Search => "step",
        StepRole::Confirm => "confirm",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_check_loses_the_user_s_json_and_keeps_the_target_s_flags() {
        let check = checked_command(&words(
            "run --json out.json --route /a -- node s.js --json x",
        ))
        .unwrap();
        assert_eq!(check, words("run --route /a -- node s.js --json x"));
        let wrong = checked_command(&words("node server.js")).unwrap_err();
        assert!(
            wrong.to_string().contains("`run …`, `fn …` or `page …`"),
            "{wrong}"
        );
    }
}
