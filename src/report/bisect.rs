//! The bisect's answer for a person: on the terminal, and in Markdown for
//! a pull request or an issue. Both say the first bad candidate, what the
//! leak is there, and the log of every step.

use std::fmt::Write;

use crate::model::{
    BisectKind, BisectReport, BisectStatus, BisectStep, Direction, StepRole, short_id as short,
};
use crate::units::per_request;

/// What is being searched: "16 commits", "12 versions of debug".
fn what(report: &BisectReport) -> String {
    match report.kind {
        BisectKind::Commits => format!("{} commits of {}", report.candidates, report.subject),
        BisectKind::Package => format!("{} versions of {}", report.candidates, report.subject),
        BisectKind::Node => format!("{} Node releases", report.candidates),
    }
}

/// "first bad commit", "first version that leaks", "first version fixed".
fn answer_name(report: &BisectReport) -> &'static str {
    match (report.kind, report.direction) {
        (BisectKind::Commits, _) => "first bad commit",
        (_, Direction::Introduced) => "first version that leaks",
        (_, Direction::Fixed) => "first version without the leak",
    }
}

fn step_line(step: &BisectStep) -> String {
    let role = match step.role {
        StepRole::End => "end",
        StepRole::Search => "step",
        StepRole::Confirm => "confirm",
    };
    let bytes = step
        .bytes_per_unit
        .map_or(String::new(), |b| format!(" {}", per_request(b)));
    let timing = match step.cached {
        true => "cached".to_string(),
        false => format!("{:.1} s", step.seconds),
    };
    let mut line = format!(
        "{role:<8}{:<12}{:<8}{:<14}{bytes:>14}  {timing:>8}  {}",
        short(&step.candidate),
        step.reading.word(),
        step.verdict.as_deref().unwrap_or("-"),
        step.label
    );
    if let Some(why) = &step.why {
        let _ = write!(line, "\n          ({why})");
    }
    line
}

pub fn terminal(report: &BisectReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bisect: {}, check `{}`",
        what(report),
        report.check.join(" ")
    );
    for step in &report.steps {
        let _ = writeln!(out, "  {}", step_line(step));
    }
    match report.status {
        BisectStatus::EndsDisagree | BisectStatus::Stopped => {
            let _ = writeln!(
                out,
                "no answer: {}",
                report.message.as_deref().unwrap_or("the bisect stopped")
            );
        }
        BisectStatus::Found | BisectStatus::Range => answer(&mut out, report),
    }
    let _ = writeln!(
        out,
        "{} of {} steps checked ({} in the search), {} read from the cache, in {:.1} s",
        report.checks_run(),
        report.steps.len(),
        report.search_steps(),
        report.steps.len() - report.checks_run(),
        report.total_seconds
    );
    out
}

fn answer(out: &mut String, report: &BisectReport) {
    let first = report.first.as_deref().unwrap_or("?");
    let label = report
        .steps
        .iter()
        .find(|s| s.candidate == first)
        .map_or("", |s| s.label.as_str());
    let label = if label == first { "" } else { label };
    let _ = writeln!(out, "{}: {} {label}", answer_name(report), short(first));
    if report.status == BisectStatus::Range {
        let others: Vec<&str> = report.could_be.iter().map(|c| short(c)).collect();
        let _ = writeln!(
            out,
            "  or one of the skipped {} before it: they could not be judged",
            others.join(", ")
        );
    }
    if let Some(commit) = &report.commit {
        let _ = writeln!(
            out,
            "  {} by {}, {}",
            commit.hash, commit.author, commit.date
        );
        if !commit.touched_in_diagnosis.is_empty() {
            let _ = writeln!(
                out,
                "  it changed {}, which the diagnosis names",
                commit.touched_in_diagnosis.join(", ")
            );
        }
        for line in commit.diff_stat.lines() {
            let _ = writeln!(out, "    {}", line.trim());
        }
    }
    if let Some(release) = &report.release {
        let _ = writeln!(out, "  {}", release.registry_url);
        if let Some(changes) = &release.changelog_url {
            let _ = writeln!(out, "  changes: {changes}");
        }
    }
    if let Some(d) = &report.diagnosis {
        let place = match report.direction {
            Direction::Introduced => "there".to_string(),
            Direction::Fixed => format!("in {}", report.last_before.as_deref().map_or("?", short)),
        };
        let _ = writeln!(out, "  the leak {place} ({}): {}", d.route, d.action);
        if let Some(path) = &d.path {
            let _ = writeln!(out, "    {path}");
        }
    }
    for noise in &report.noise {
        let _ = writeln!(out, "  noise: {noise}");
    }
}

pub fn markdown(report: &BisectReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### leakcheck bisect: {}\n", what(report));
    match report.status {
        BisectStatus::Found | BisectStatus::Range => {
            let first = report.first.as_deref().unwrap_or("?");
            let _ = writeln!(out, "**{}: `{}`**", answer_name(report), short(first));
            if let Some(commit) = &report.commit {
                let _ = writeln!(
                    out,
                    "\n{} ({}, {})",
                    commit.subject, commit.author, commit.date
                );
                if !commit.touched_in_diagnosis.is_empty() {
                    let _ = writeln!(
                        out,
                        "\nIt changed {}, which the diagnosis names.",
                        commit
                            .touched_in_diagnosis
                            .iter()
                            .map(|f| format!("`{f}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
                let _ = writeln!(out, "\n```text\n{}\n```", commit.diff_stat.trim_end());
            }
            if let Some(release) = &report.release {
                let changes = release
                    .changelog_url
                    .as_deref()
                    .map_or(String::new(), |c| format!(" · [changes]({c})"));
                let _ = writeln!(
                    out,
                    "\n[{}]({}){changes}",
                    release.version, release.registry_url
                );
            }
            if let Some(d) = &report.diagnosis {
                let _ = writeln!(out, "\nThe leak there (`{}`): {}", d.route, d.action);
            }
            if !report.could_be.is_empty() {
                let _ = writeln!(
                    out,
                    "\nOr one of the skipped {} before it.",
                    report
                        .could_be
                        .iter()
                        .map(|c| format!("`{}`", short(c)))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            for noise in &report.noise {
                let _ = writeln!(out, "\nNoise: {noise}.");
            }
        }
        _ => {
            let _ = writeln!(
                out,
                "No answer: {}",
                report.message.as_deref().unwrap_or("stopped")
            );
        }
    }
    let _ = writeln!(
        out,
        "\n| step | candidate | reading | verdict | kept per unit | time |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for step in &report.steps {
        let _ = writeln!(
            out,
            "| {:?} | `{}` {} | {} | {} | {} | {} |",
            step.role,
            short(&step.candidate),
            step.label.replace('|', "\\|"),
            step.reading.word(),
            step.verdict.as_deref().unwrap_or("-"),
            step.bytes_per_unit.map_or("-".into(), per_request),
            if step.cached {
                "cached".into()
            } else {
                format!("{:.1} s", step.seconds)
            }
        );
    }
    let _ = writeln!(
        out,
        "\nCheck: `leakcheck {}` · {} checks in {:.0} s",
        report.check.join(" "),
        report.checks_run(),
        report.total_seconds
    );
    out
}
