//! Holders in the framework's own words (frameworks/*.yaml): real Express,
//! Koa, Fastify, RxJS and socket.io apps from npm (installed once with the known
//! leaks' packages, tests/targets/known/package.json), each leaking through
//! the framework's own structure, named as its users write it, with the
//! action that applies and never the word "listener"; the per-request
//! misuses are catalogue entries with a clean twin. An emitter's listener
//! list is still called one (snapshots::names_event_emitter_listeners,
//! diagnose::map_cache_listeners_and_timers_are_named).

use leakcheck::model::{Holder, HolderKind};

use crate::known::{check, clean_under, recognised_under};
use crate::util::*;

/// The first holder of a route that was diagnosed.
fn first_holder(route: &RouteResult) -> Holder {
    let diagnosis = route.diagnosis.as_ref().expect("the leak was diagnosed");
    diagnosis
        .holders
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("no holder named: {diagnosis:#?}"))
}

/// Neither the holder's name nor the action speaks of listeners or of
/// the engine's way in (`<symbol owner_symbol>._events.request`).
fn says_no_listener(holder: &Holder, action: &str) {
    for text in [holder.name.as_str(), action] {
        assert!(!text.to_lowercase().contains("listener"), "{text}");
        assert!(!text.contains("owner_symbol"), "{text}");
    }
}

#[test]
fn express_middleware_added_per_request_is_the_apps_middleware_stack() {
    let script = "express-use-per-request.cjs";
    let (finished, route) = check(script, &node(), &[], "2000", &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let holder = first_holder(&route);
    assert_eq!(holder.name, "app._router.stack", "{holder:#?}");
    assert_eq!(holder.kind, HolderKind::MiddlewareStack);
    let framework = holder.framework.as_ref().expect("recognised as Express's");
    assert_eq!(framework.what, "Express's middleware stack");
    assert!(
        framework.path_name.contains("_router.stack"),
        "{framework:#?}"
    );
    // The engine's path is kept for those who want it.
    assert!(
        holder.path_text.contains("closure \"app\""),
        "{}",
        holder.path_text
    );
    let action = &verdict_of(&route).action;
    says_no_listener(&holder, action);
    assert!(action.contains("`app.use()`"), "{action}");
    // The app's own line: where the handler calls app.use().
    assert!(
        action.contains("express-use-per-request.cjs:10"),
        "{action}"
    );

    let (known, _) = recognised_under(
        script,
        "express-middleware-per-request",
        &node(),
        &[],
        "2000",
        &[],
    );
    assert_eq!(known.kind, "misuse");
    clean_under(script, &node(), &[("FIXED", "1")]);
}

#[test]
fn koa_middleware_added_per_request_is_app_middleware_not_koa_composes_variable() {
    let script = "koa-use-per-request.cjs";
    let (finished, route) = check(script, &node(), &[], "3000", &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let holder = first_holder(&route);
    assert_eq!(holder.name, "app.middleware", "{holder:#?}");
    assert_eq!(holder.kind, HolderKind::MiddlewareStack);
    assert_eq!(
        holder.framework.as_ref().map(|f| f.what.as_str()),
        Some("Koa's middleware stack")
    );
    // Reached through koa-compose's closure: not its script, not its fix.
    assert_eq!(holder.script, None, "{holder:#?}");
    let action = &verdict_of(&route).action;
    says_no_listener(&holder, action);
    let known = route
        .diagnosis
        .as_ref()
        .and_then(|d| d.known_leak.as_ref())
        .expect("the misuse was recognised");
    assert_eq!(known.id, "koa-middleware-per-request");
    assert!(action.contains("`app.use()` once, at start-up"), "{action}");
    clean_under(script, &node(), &[("FIXED", "1")]);
}

#[test]
fn a_fastify_decorator_is_named_on_the_instance_and_hooks_after_listen_are_refused() {
    let script = "fastify-decorator.cjs";
    // Fastify refuses a hook once it listens, so no request can add one:
    // the route that tries answers 500 and the stack does not grow.
    let port = free_port();
    let target = crate::known::target(script, &node(), port);
    let refused = RunArgs::new(port)
        .routes(&["/hook"])
        .cycles(1)
        .requests("50")
        .args(&["--no-diagnose"])
        .run(&target);
    let result = refused.result();
    let cycle = &result.routes[0].cycles[0];
    assert_eq!(cycle.load.status.s5xx, 50, "{cycle:#?}");

    let (finished, route) = check(script, &node(), &[], "2000", &[]);
    assert_eq!(finished.code, 1, "{}", finished.stderr);
    let holder = first_holder(&route);
    assert_eq!(holder.name, "fastify.seen", "{holder:#?}");
    assert_eq!(holder.kind, HolderKind::MapSetEntries);
    assert_eq!(
        holder.framework.as_ref().map(|f| f.what.as_str()),
        Some("a Fastify decorator")
    );
    let action = &verdict_of(&route).action;
    says_no_listener(&holder, action);
    assert!(action.contains("never deleted"), "{action}");
}

#[test]
fn an_rxjs_subscription_per_request_is_the_subjects_subscribers_by_its_variable() {
    let script = "rxjs-subscribe-per-request.cjs";
    let (known, action) = recognised_under(
        script,
        "rxjs-subscribe-without-unsubscribe",
        &node(),
        &[],
        "2000",
        &[],
    );
    assert_eq!(known.package, "rxjs");
    assert!(action.contains("Held by `config$.observers`"), "{action}");
    let (_, route) = check(script, &node(), &[], "2000", &[]);
    let holder = first_holder(&route);
    assert_eq!(holder.kind, HolderKind::SubscriptionList, "{holder:#?}");
    clean_under(script, &node(), &[("FIXED", "1")]);
}

#[test]
fn a_socketio_namespace_per_request_is_named_io_nsps_at_the_line_that_makes_it() {
    let script = "socketio-namespace-per-request.cjs";
    let (known, action) = recognised_under(
        script,
        "socketio-namespace-per-request",
        &node(),
        &[],
        "2000",
        &[],
    );
    assert_eq!(known.package, "socket.io");
    // The arrow function socket.io attaches captures `this`: the name is
    // the framework's `io`, and the line is code, not the comment above
    // it that says "Socket.io".
    assert!(action.contains("Held by `io._nsps`"), "{action}");
    assert!(action.contains("io.of(`/tenant-"), "{action}");
    let (_, route) = check(script, &node(), &[], "2000", &[]);
    let holder = first_holder(&route);
    assert_eq!(holder.kind, HolderKind::RouteTable, "{holder:#?}");
    says_no_listener(&holder, &verdict_of(&route).action);
    clean_under(script, &node(), &[("FIXED", "1")]);
}
