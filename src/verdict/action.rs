//! What to do once the diagnosis has named the holder. Before it, the
//! verdict's action is the method's ("take two heap snapshots… read the
//! retainer path"); after it, leakcheck has done that, so the action is
//! about the variable it found, in the words of the slot's kind.

use crate::model::{CollectionState, Diagnosis, Holder, HolderKind, Owner};

/// " in pages/index.js": where the holder is declared, its original
/// source first; empty when unknown.
pub fn place_of(holder: &Holder) -> String {
    holder
        .original_script
        .as_deref()
        .or(holder.script.as_deref())
        .map_or(String::new(), |s| format!(" in {s}"))
}

/// The action for a route whose diagnosis named at least one holder;
/// `unit` is what the work is counted in (`request`, `iteration`).
/// `over_time`: the growth follows the clock (`time-growth`), not the work.
pub fn after_diagnosis(diagnosis: &Diagnosis, unit: &str, over_time: bool) -> Option<String> {
    let groups = diagnosis.holders_by_object();
    let Some(holder) = groups.first().and_then(|g| g.first()) else {
        return grown_collection(diagnosis, unit);
    };
    // A holder of a sliver of the growth (a cache of Node's) beside a list
    // that gained an entry per unit: the list is what keeps the growth.
    if holds_a_sliver(holder, diagnosis)
        && let Some(action) = grown_collection(diagnosis, unit)
    {
        return Some(action);
    }
    // Only the engine's own objects were new (compiled code, Blink's
    // tables): whatever the snapshot calls their holder (`matchRoute`,
    // `this`) is not where the app keeps anything.
    if crate::model::is_engine_class(&holder.class) {
        return Some(grown_collection(diagnosis, unit).unwrap_or_else(|| engine_only(unit)));
    }
    let fix = match &holder.framework {
        Some(framework) if framework.action.is_some() => {
            in_framework_words(holder, framework, diagnosis, unit)
        }
        _ => by_kind(holder, unit, over_time),
    };
    let site = stored_at(diagnosis);
    // A framework's own structure (Koa's stack, also koa-compose's
    // variable) is where the team's code added to it, not a dependency
    // to update.
    let mut text = match &holder.owner {
        Some(owner @ Owner::Dependency { .. }) if holder.framework.is_none() => format!(
            "held inside the dependency {}: {fix}; if your code passes it per-{unit} objects, \
             stop or release them (its API may have a remove, a close or a size limit), or \
             update it",
            owner.describe()
        ),
        _ => fix,
    };
    if let Some(first) = text.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    let yours = match (&holder.framework, site.is_empty()) {
        (Some(_), true) => your_code(diagnosis),
        _ => String::new(),
    };
    Some(format!("{text}.{site}{yours}"))
}

/// " It is stored at app.cjs:5: `app.use(audit);`": the line of the team's
/// code that stores into the holder, in its original source when mapped;
/// empty when no line was read.
pub fn stored_at(diagnosis: &Diagnosis) -> String {
    diagnosis
        .storing_site()
        .and_then(|s| match &s.holder_line_original {
            Some(original) => Some(format!(
                " It is stored at {original}: `{}`",
                original
                    .text
                    .as_deref()
                    .or(s.holder_line_text.as_deref())?
                    .trim()
            )),
            None => Some(format!(
                " It is stored at {}:{}: `{}`",
                s.url,
                s.holder_line?,
                s.holder_line_text.as_deref()?.trim()
            )),
        })
        .unwrap_or_default()
}

/// Where the team's code takes part: the line that stores into the
/// holder, else the app's busiest allocation site.
pub fn in_your_code(diagnosis: &Diagnosis) -> String {
    match stored_at(diagnosis) {
        stored if stored.is_empty() => your_code(diagnosis),
        stored => format!("{stored}."),
    }
}

/// The fix for a holder by what kind of slot keeps it: a variable or
/// property, a Map, an emitter's listeners, Node's timers, a framework's
/// stack or table, an observable's subscribers. Never by a word in its
/// name (`frameworks/*.yaml` and `snapshot/naming.rs` decide the kind).
fn by_kind(holder: &Holder, unit: &str, over_time: bool) -> String {
    let name = match &holder.framework {
        Some(framework) => format!("`{}` ({})", holder.name, framework.what),
        None => format!("`{}`", holder.name),
    };
    let place = place_of(holder);
    match holder.kind {
        HolderKind::ClosureVariable | HolderKind::GlobalProperty | HolderKind::ObjectProperty
            if over_time =>
        {
            format!(
                "{name}{place} keeps what is added to it as time passes, with or without \
                 {unit}s: bound it (a ring buffer, an LRU or a TTL) where the timer feeds it"
            )
        }
        HolderKind::ClosureVariable | HolderKind::GlobalProperty | HolderKind::ObjectProperty => {
            format!(
                "{name}{place} keeps what each {unit} adds: bound it (an LRU or a TTL), or drop \
                 the reference when the {unit} ends"
            )
        }
        HolderKind::MapSetEntries => format!(
            "{name}{place} gains entries per {unit} that are never deleted: delete them when \
             they are done, or bound the map (an LRU or a TTL)"
        ),
        HolderKind::EventListenerList => format!(
            "listeners are added to {name}{place} per {unit} and never removed: remove them \
             (off/removeListener) when the {unit} ends, or register one listener at start-up"
        ),
        HolderKind::TimerList => format!(
            "timers started per {unit} are still pending in {name}{place}: clear them \
             (clearTimeout/clearInterval) when the {unit} ends"
        ),
        HolderKind::MiddlewareStack => format!(
            "{name}{place} gains middleware per {unit}: middleware is registered while \
             serving a {unit}; register it once, at start-up"
        ),
        HolderKind::RouteTable => format!(
            "{name}{place} gains routes per {unit}: routes are declared while serving a \
             {unit}; declare them once, at start-up"
        ),
        HolderKind::HookList => format!(
            "{name}{place} gains hooks per {unit}: hooks (interceptors, pipes, guards) are \
             registered while serving a {unit}; register them once, at start-up"
        ),
        HolderKind::SubscriptionList => format!(
            "{name}{place} gains a subscriber per {unit} that never unsubscribes: \
             unsubscribe when the {unit} is done, or complete the stream (take(1), takeUntil)"
        ),
        HolderKind::Internal => format!(
            "V8-internal object {name} keeps what each {unit} adds: follow its retainer path \
             ({}) to the code that reaches it",
            holder.path_text
        ),
    }
}

/// "`app._router.stack` (Express's middleware stack) gains 1.00 Layer per
/// request: `app.use()` … runs while serving a request…": the holder as
/// the framework's users name it, and the fix its file gives (else the
/// kind's).
fn in_framework_words(
    holder: &Holder,
    framework: &crate::model::FrameworkHolder,
    diagnosis: &Diagnosis,
    unit: &str,
) -> String {
    let per_unit = holder.objects as f64 / diagnosis.requests.max(1) as f64;
    // V8's bracketed classes read as words: `(closure)` is a function.
    let class = match holder.class.as_str() {
        "(closure)" => "function",
        bracketed => bracketed.trim_start_matches('(').trim_end_matches(')'),
    };
    let gains = if per_unit >= 0.5 {
        format!("gains {per_unit:.2} {class} per {unit}")
    } else {
        format!("grows with the {unit}s")
    };
    match &framework.action {
        Some(action) => format!(
            "`{}` ({}) {gains}: {}",
            holder.name,
            framework.what,
            action.replace("{unit}", unit)
        ),
        None => by_kind(holder, unit, false),
    }
}

/// " Your code that does it: `handler` at app.cjs:3.": the app's busiest
/// allocation site, when no line storing into the holder was read.
fn your_code(diagnosis: &Diagnosis) -> String {
    diagnosis
        .allocation_sites
        .iter()
        .filter(|s| s.owner == Some(Owner::App))
        .max_by_key(|s| s.bytes)
        .map_or(String::new(), |s| {
            format!(
                " Your code that does it: `{}` at {}.",
                s.function,
                s.location()
            )
        })
}

/// The words when the snapshots' new objects are all the engine's: what
/// grew did so in place (an array of numbers gaining entries reuses or
/// enlarges its backing store, which two snapshots do not show as new
/// objects), so no holder can be named honestly.
fn engine_only(unit: &str) -> String {
    format!(
        "No variable could be named: the objects new in the diagnosis' snapshots are the \
         engine's own (compiled code, object shapes, the browser's tables), and what grows does \
         so in place, as arrays of numbers or strings gaining entries do. Look for an array or a \
         map that gains entries each {unit} (DevTools' Memory panel: Comparison view, sorted by \
         size delta, `(object elements)`), or check with --snapshots DIR and `leakcheck diff`."
    )
}

/// Entries per unit at which a grown collection is the leak's own list:
/// one kept object (a document, a session) per unit, or more. A page's
/// elements left in the document are counted by the same rule.
pub(super) const ONE_PER_UNIT: f64 = 0.9;

/// The share of the diagnosis cycle's new bytes under which a holder is
/// a sliver of the growth, not its keeper.
const SLIVER: f64 = 0.1;

fn holds_a_sliver(holder: &Holder, diagnosis: &Diagnosis) -> bool {
    let grown: i64 = diagnosis.classes.iter().map(|c| c.size_delta.max(0)).sum();
    grown > 0 && (holder.retained_bytes.max(holder.new_bytes) as f64) < SLIVER * grown as f64
}

/// Without a holder (each new object is reached from two places, a list
/// and a timer, so no single object dominates them), the collection the
/// snapshots saw gain an entry per unit is what keeps them.
fn grown_collection(diagnosis: &Diagnosis, unit: &str) -> Option<String> {
    let grown = diagnosis
        .collections
        .iter()
        .filter(|c| c.per_unit >= ONE_PER_UNIT && c.state != CollectionState::Capped)
        .max_by(|a, b| a.per_unit.total_cmp(&b.per_unit))?;
    let place = grown
        .script
        .as_deref()
        .map_or(String::new(), |s| format!(" in {s}"));
    // Where what the entries hold was allocated: the app's busiest site.
    let site = diagnosis
        .allocation_sites
        .iter()
        .filter(|s| s.owner == Some(Owner::App))
        .max_by_key(|s| s.bytes)
        .map_or(String::new(), |s| {
            format!(
                " What they hold is allocated in `{}` at {}.",
                s.function,
                s.location()
            )
        });
    Some(format!(
        "`{}` ({}{place}) gains {:.2} entries per {unit} and keeps what each holds: remove the \
         entry when the {unit} is done with it, or bound it (an LRU or a TTL).{site}",
        grown.name, grown.kind, grown.per_unit
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AllocationSite, Holder};

    #[test]
    fn a_holder_of_the_engine_s_objects_is_not_named_as_the_app_s() {
        let mut compiled = diagnosis(HolderKind::ClosureVariable, None);
        compiled.holders[0].name = "matchRoute".into();
        compiled.holders[0].class = "(compiled code)".into();
        let text = after_diagnosis(&compiled, "iteration", false).unwrap();
        assert!(text.starts_with("No variable could be named"), "{text}");
        assert!(!text.contains("`matchRoute`"), "{text}");
        let mut blink = compiled.clone();
        blink.holders[0].name = "this".into();
        blink.holders[0].class = "blink::HeapHashTableBacking<…>".into();
        assert!(
            !after_diagnosis(&blink, "iteration", false)
                .unwrap()
                .contains("`this`")
        );
    }

    fn diagnosis(kind: HolderKind, line: Option<u32>) -> Diagnosis {
        Diagnosis {
            isolate: None,
            requests: 100,
            classes: Vec::new(),
            collections: Vec::new(),
            holders: vec![Holder {
                class: "Object".into(),
                name: "keptRequests".into(),
                kind,
                holder_class: "Array".into(),
                holder_id: 7,
                objects: 100,
                new_bytes: 6400,
                retained_bytes: 9000,
                script: Some("server.mjs".into()),
                path: Vec::new(),
                path_text: "(GC roots) → keptRequests".into(),
                ..Holder::default()
            }],
            allocation_sites: vec![AllocationSite {
                function: "handle".into(),
                url: "file:///app/server.mjs".into(),
                line: 10,
                column: 3,
                bytes: 4096,
                holder_line: line,
                holder_line_text: line.map(|_| "  keptRequests.push(req.headers);".into()),
                ..AllocationSite::default()
            }],
            sites_without_inlining: true,
            snapshot_bytes: [0, 0],
            snapshot_files: Vec::new(),
            snapshot_seconds: 0.0,
            analysis_seconds: 0.0,
            target_rss_before: 0,
            target_rss_after: 0,
            ..Diagnosis::default()
        }
    }

    #[test]
    fn names_the_holder_and_the_line_that_stores_into_it() {
        let text = after_diagnosis(
            &diagnosis(HolderKind::ClosureVariable, Some(12)),
            "request",
            false,
        )
        .unwrap();
        assert!(
            text.starts_with("`keptRequests` in server.mjs keeps"),
            "{text}"
        );
        assert!(
            text.contains("server.mjs:12: `keptRequests.push(req.headers);`"),
            "{text}"
        );
        assert!(!text.contains("take two heap snapshots"), "{text}");
    }

    #[test]
    fn a_holder_fed_by_a_timer_is_about_time_not_requests() {
        let text = after_diagnosis(
            &diagnosis(HolderKind::ClosureVariable, Some(12)),
            "request",
            true,
        )
        .unwrap();
        assert!(text.contains("as time passes"), "{text}");
        assert!(!text.contains("when the request ends"), "{text}");
        assert!(text.contains("server.mjs:12"), "{text}");
    }

    #[test]
    fn listener_lists_ask_for_removal() {
        let text = after_diagnosis(
            &diagnosis(HolderKind::EventListenerList, None),
            "request",
            false,
        )
        .unwrap();
        assert!(text.starts_with("Listeners are added"), "{text}");
        assert!(!text.contains("stored at"), "{text}");
    }

    /// Each kind's action says what applies to that kind, and only an
    /// emitter's listener list is told about listeners.
    #[test]
    fn every_kind_has_its_own_action_and_only_listeners_mention_listeners() {
        let expected = [
            (HolderKind::ClosureVariable, "bound it"),
            (HolderKind::GlobalProperty, "bound it"),
            (HolderKind::ObjectProperty, "bound it"),
            (HolderKind::MapSetEntries, "delete them"),
            (HolderKind::EventListenerList, "off/removeListener"),
            (HolderKind::TimerList, "clearTimeout"),
            (HolderKind::MiddlewareStack, "register it once, at start-up"),
            (HolderKind::RouteTable, "declare them once"),
            (HolderKind::HookList, "register them once"),
            (HolderKind::SubscriptionList, "unsubscribe"),
            (HolderKind::Internal, "retainer path"),
        ];
        for (kind, words) in expected {
            let text = after_diagnosis(&diagnosis(kind, None), "request", false).unwrap();
            assert!(text.contains(words), "{kind}: {text}");
            let listeners = text.to_lowercase().contains("listener");
            assert_eq!(
                listeners,
                kind == HolderKind::EventListenerList,
                "{kind}: {text}"
            );
        }
    }

    #[test]
    fn a_frameworks_holder_is_named_as_its_users_write_it_with_its_fix_and_the_apps_line() {
        let mut d = diagnosis(HolderKind::MiddlewareStack, None);
        d.requests = 2000;
        d.holders[0].class = "Layer".into();
        d.holders[0].objects = 2000;
        d.holders[0].name = "app._router.stack".into();
        d.holders[0].framework = Some(crate::model::FrameworkHolder {
            framework: "Express".into(),
            what: "Express's middleware stack".into(),
            path_name: "<symbol owner_symbol>._events.request._router.stack".into(),
            action: Some("`app.use()` runs while serving a {unit}".into()),
        });
        d.allocation_sites[0].owner = Some(Owner::App);
        let text = after_diagnosis(&d, "request", false).unwrap();
        assert!(
            text.starts_with(
                "`app._router.stack` (Express's middleware stack) gains 1.00 Layer per request: \
                 `app.use()` runs while serving a request"
            ),
            "{text}"
        );
        assert!(text.contains("`handle` at"), "{text}");
        assert!(
            !text.contains("owner_symbol") && !text.contains("listener"),
            "{text}"
        );
        // Without a fix of its own, the kind's, under the framework's name.
        d.holders[0].framework.as_mut().unwrap().action = None;
        d.holders[0].kind = HolderKind::MapSetEntries;
        let text = after_diagnosis(&d, "request", false).unwrap();
        assert!(
            text.starts_with("`app._router.stack` (Express's middleware stack)")
                && text.contains("gains entries per request"),
            "{text}"
        );
    }

    #[test]
    fn no_holder_keeps_the_methods_action() {
        let mut d = diagnosis(HolderKind::Internal, None);
        d.holders.clear();
        assert_eq!(after_diagnosis(&d, "request", false), None);
    }

    #[test]
    fn without_a_holder_the_list_that_grew_per_unit_is_named() {
        let mut diagnosis = Diagnosis::default();
        assert_eq!(after_diagnosis(&diagnosis, "request", false), None);
        diagnosis.collections.push(crate::model::Collection {
            name: "documents".into(),
            kind: "Array".into(),
            entries_before: 8,
            entries_after: 25,
            per_unit: 1.0,
            script: Some("server.mjs".into()),
            ..crate::model::Collection::default()
        });
        let action = after_diagnosis(&diagnosis, "request", false).unwrap();
        assert!(
            action.starts_with("`documents` (Array in server.mjs) gains 1.00 entries per request"),
            "{action}"
        );
    }

    #[test]
    fn a_holder_of_a_sliver_gives_way_to_the_list_that_grew() {
        let mut diagnosis = Diagnosis::default();
        diagnosis.classes.push(crate::model::ClassDiff {
            class: "Object".into(),
            size_delta: 20 << 20,
            ..crate::model::ClassDiff::default()
        });
        diagnosis.holders.push(Holder {
            name: "utcCache".into(),
            new_bytes: 200,
            retained_bytes: 400,
            ..Holder::default()
        });
        let named = after_diagnosis(&diagnosis, "request", false).unwrap();
        assert!(named.contains("`utcCache`"), "{named}");
        diagnosis.collections.push(crate::model::Collection {
            name: "documents".into(),
            kind: "Array".into(),
            per_unit: 1.0,
            ..crate::model::Collection::default()
        });
        diagnosis.allocation_sites.push(AllocationSite {
            function: "render".into(),
            url: "server.mjs".into(),
            line: 18,
            bytes: 7 << 20,
            owner: Some(Owner::App),
            ..AllocationSite::default()
        });
        let named = after_diagnosis(&diagnosis, "request", false).unwrap();
        assert!(named.starts_with("`documents`"), "{named}");
        assert!(
            named.contains("allocated in `render` at server.mjs:18"),
            "{named}"
        );
    }
}
