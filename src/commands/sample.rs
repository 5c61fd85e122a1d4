//! `leakcheck sample`: one reading of a running target, optionally after a
//! settled full collection.

use crate::model::Metric;
use crate::net::resolve_http;
use crate::report::{emit_summary, pretty_json};
use crate::settings::SampleProps;
use crate::units::mb_cell;

use crate::session::attach::connect_probe;

pub async fn run(props: SampleProps) -> anyhow::Result<()> {
    let app = match &props.url {
        Some(url) => Some(resolve_http(url, false)?.addr),
        None => None,
    };
    let mut connected = connect_probe(
        &props.attach,
        app,
        props.allow_remote_inspector,
        &props.counters,
    )
    .await?;
    let probe = connected.probe.as_mut();
    if props.gc && !probe.can_collect() {
        eprintln!(
            "note: the {} probe cannot force a collection; the reading includes garbage",
            probe.kind()
        );
    }
    let sample = if props.gc {
        probe.settled_sample().await?
    } else {
        probe.sample().await?
    };
    let mut line = Vec::new();
    for metric in Metric::ALL {
        line.push(format!(
            "{} {} MB",
            metric.label(),
            mb_cell(sample.get(metric))
        ));
    }
    for (name, value) in &sample.counters {
        line.push(format!(
            "{name} {}",
            value.map_or("-".to_string(), |v| v.to_string())
        ));
    }
    let text = format!(
        "{} ({} probe{})\n",
        line.join(" · "),
        probe.kind(),
        if props.gc { ", after GC" } else { "" }
    );
    emit_summary(&text, props.json.as_ref(), || pretty_json(&sample))?;
    Ok(())
}
