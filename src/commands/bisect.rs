//! `leakcheck bisect`: the search (`crate::bisect`), then its answer on
//! the terminal, in JSON and in Markdown. Exit 0 when the answer is named
//! (or narrowed to a range), 2 when it could not be (ends that do not
//! differ, an error).

use anyhow::Context;

use crate::commands::exit::RunEnd;
use crate::model::BisectStatus;
use crate::report::bisect as view;
use crate::report::progress::Progress;
use crate::settings::BisectProps;

pub fn run(props: BisectProps) -> anyhow::Result<RunEnd> {
    let progress = Progress::new(props.quiet);
    let here = std::env::current_dir().context("cannot read the working directory")?;
    let say = |text: &str| progress.say(text);
    let report = crate::bisect::run(&props, &here, &say)?;
    let terminal = view::terminal(&report);
    let to_stdout = |target: &Option<String>| target.as_deref() == Some("-");
    if !to_stdout(&props.json) && !to_stdout(&props.markdown) {
        print!("{terminal}");
    } else {
        eprint!("{terminal}");
    }
    if let Some(target) = &props.json {
        let text = serde_json::to_string_pretty(&report)? + "\n";
        write(target, &text)?;
    }
    if let Some(target) = &props.markdown {
        write(target, &view::markdown(&report))?;
    }
    Ok(match report.status {
        BisectStatus::Found | BisectStatus::Range => RunEnd::Clean,
        BisectStatus::EndsDisagree | BisectStatus::Stopped => RunEnd::Failed,
    })
}

fn write(target: &str, text: &str) -> anyhow::Result<()> {
    if target == "-" {
        print!("{text}");
        return Ok(());
    }
    std::fs::write(target, text).with_context(|| format!("cannot write {target}"))
}
