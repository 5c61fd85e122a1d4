//! The text tables of `leakcheck inspect` and `leakcheck diff`: classes,
//! the largest retainers, what grew between two snapshots and what holds it.

use std::fmt::Write;

use crate::snapshot::{DiffReport, InspectReport};
use crate::units::mb;

pub fn inspect_text(r: &InspectReport) -> String {
    let mut out = String::new();
    let t = &r.totals;
    let _ = writeln!(
        out,
        "{} nodes, {} edges, {} strings; self sizes {}",
        t.nodes,
        t.edges,
        t.strings,
        mb(t.self_size as f64)
    );
    let _ = writeln!(
        out,
        "\n{:<48} {:>9} {:>12} {:>14}",
        "class", "count", "self size", "retained size"
    );
    for c in &r.classes {
        let _ = writeln!(
            out,
            "{:<48} {:>9} {:>12} {:>14}",
            clip(&c.class, 48),
            c.count,
            c.self_size,
            c.retained_size
        );
    }
    let _ = writeln!(
        out,
        "\nlargest retainers\n{:<12} {:<40} {:>12} {:>14} {:>8}",
        "id", "class", "self size", "retained size", "distance"
    );
    for o in &r.largest_retainers {
        let _ = writeln!(
            out,
            "@{:<11} {:<40} {:>12} {:>14} {:>8}",
            o.id,
            clip(&o.class, 40),
            o.self_size,
            o.retained_size,
            o.distance
        );
    }
    out
}

pub fn diff_text(r: &DiffReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "nodes  {} -> {}", r.before.nodes, r.after.nodes);
    let _ = writeln!(
        out,
        "\n{:<44} {:>8} {:>9} {:>8} {:>12} {:>11} {:>12}",
        "class", "# New", "# Deleted", "# Delta", "Alloc. Size", "Freed Size", "Size Delta"
    );
    for c in &r.classes {
        let _ = writeln!(
            out,
            "{:<44} {:>8} {:>9} {:>8} {:>12} {:>11} {:>12}",
            clip(&c.class, 44),
            c.new_count,
            c.deleted_count,
            c.delta_count,
            c.alloc_size,
            c.freed_size,
            c.size_delta
        );
    }
    let _ = writeln!(out, "\ngrew by self size:");
    for g in r.grew_by_self_size.iter().take(6) {
        let _ = writeln!(
            out,
            "  {:<40} {:>8} objects  {:.2} MB",
            clip(&g.key, 40),
            g.count_delta,
            g.self_size_delta as f64 / 1048576.0
        );
    }
    for h in &r.holders {
        let _ = writeln!(
            out,
            "\nheld by {} ({}): {} new {} objects, {} new, {} retained by the {} @{}",
            h.name,
            h.kind_words(),
            h.objects,
            h.class,
            mb(h.new_bytes as f64),
            mb(h.retained_bytes as f64),
            h.holder_class,
            h.holder_id
        );
        if let Some(script) = &h.script {
            let _ = writeln!(out, "  declared in {script}");
        }
        let _ = writeln!(out, "  {}", h.path_text);
    }
    out
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let cut: String = text.chars().take(width - 1).collect();
        format!("{cut}…")
    }
}
