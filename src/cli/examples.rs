//! The whole commands each subcommand's `--help` ends with. Every line that
//! starts with `leakcheck ` is parsed by the command line in a test
//! (`tests/it/docs.rs`), so an example cannot name a flag that does not
//! exist; the book's command reference prints the same text.

pub const RUN: &str = "\
Examples:
  # The bundled demo: /churn drops what it allocates, /leak keeps every request
  leakcheck run --url http://127.0.0.1:9750 --route /churn --route /leak -- node examples/demo-server.mjs

  # Every route the app's router declares, a report for people and one for the next release
  leakcheck run --url http://127.0.0.1:3000 --routes-from app --html report.html --json result.json -- node server.js

  # Vary each request ({uuid}, {rand:A-B}; a cache keyed by id grows only when ids differ), gate against main.json
  leakcheck run --url http://127.0.0.1:3000 --route '/item?id={uuid}' --baseline main.json -- npm start";

pub const SOAK: &str = "\
Examples:
  # Ten minutes at 200 requests/s, a settled reading every 30 s, projected to the heap limit
  leakcheck soak --url http://127.0.0.1:3000 --route /api/orders -d 10m -R 200 --every 30s -- node server.js

  # A growth with time, not requests (a timer): a slow constant rate over a longer soak
  leakcheck soak --url http://127.0.0.1:3000 --route /health -d 30m -R 5 -- node server.js";

pub const PAGE: &str = "\
Examples:
  # Open and close a dialog 50 times a cycle; DOM nodes, listeners and heap judged
  leakcheck page http://127.0.0.1:5173/ --action 'click #open' --action 'click #close'

  # Every same-origin link of the home page, each its own route, with an HTML report
  leakcheck page http://127.0.0.1:3000/ --links --html page-report.html

  # Log in once, then repeat a navigation
  leakcheck page http://127.0.0.1:3000/login --setup 'type #user alice' --setup 'click #submit' --action 'goto /inbox' --action back";

pub const FN: &str = "\
Examples:
  # A module's export called in cycles: what each call keeps, and who holds it
  leakcheck fn examples/cache.mjs#remember

  # A client made once by --setup, closed by --teardown, 8 calls in flight, TypeScript through tsx
  leakcheck fn ./src/client.ts#request --setup connect --teardown close -c 8 -- --import tsx";

pub const ROUTES: &str = "\
Examples:
  # What `run --routes-from app` would check, read from the live router
  leakcheck routes --url http://127.0.0.1:3000 --routes-from app -- node server.js

  # From an OpenAPI document, POST included, as JSON
  leakcheck routes --url http://127.0.0.1:3000 --openapi openapi.yaml --methods GET,POST --json routes.json";

pub const LOAD: &str = "\
Examples:
  # Exactly 20 000 requests over 32 connections
  leakcheck load http://127.0.0.1:9750/churn -a 20k -c 32

  # A constant 500 requests/s for a minute, latency measured from the schedule
  leakcheck load http://127.0.0.1:3000/api -d 1m -R 500 --json load.json";

pub const SAMPLE: &str = "\
Examples:
  # One settled reading of a running Node process (its inspector opened by SIGUSR1)
  leakcheck sample --pid 12345 --gc

  # Through an inspector already listening, as JSON
  leakcheck sample --inspect 127.0.0.1:9229 --gc --json -";

pub const SNAPSHOT: &str = "\
Examples:
  # A snapshot of live objects only, from a process by pid
  leakcheck snapshot --pid 12345 --gc -o before.heapsnapshot

  # Through an inspector already listening
  leakcheck snapshot --inspect 127.0.0.1:9229 -o after.heapsnapshot";

pub const REPORT: &str = "\
Examples:
  # A saved result rendered again, for people
  leakcheck report result.json --html report.html --markdown summary.md

  # The shards of a CI matrix merged into one result and one report
  leakcheck report --merge results/ --json all.json --html report.html

  # This release against the last one: exit 1 when a route regresses by more than 20 %
  leakcheck report result.json --baseline main.json --tolerance 20";

pub const INSPECT: &str = "\
Examples:
  leakcheck inspect heap.heapsnapshot
  leakcheck inspect heap.heapsnapshot --top 40 --json summary.json";

pub const DIFF: &str = "\
Examples:
  # What grew between two snapshots of one process, and what holds it
  leakcheck diff before.heapsnapshot after.heapsnapshot

  leakcheck diff before.heapsnapshot after.heapsnapshot --top 10 --json diff.json";

pub const REDACT: &str = "\
Examples:
  # A before/after pair, fit to attach to a public issue
  leakcheck redact before.heapsnapshot after.heapsnapshot -o redacted/

  # One snapshot, written into the evidence folder under its own name
  leakcheck redact heap.heapsnapshot --out evidence/";

pub const WATCH: &str = "\
Examples:
  # A live process by pid, until its trend is decided
  leakcheck watch --pid 12345 --until-decided

  # Every Node process of this host whose command line matches, for Prometheus
  leakcheck watch --all --match server.js --metrics 127.0.0.1:9464

  # Start the server and watch it for ten minutes under its own traffic
  leakcheck watch -d 10m --html watch.html -- node server.js";

pub const BISECT: &str = "\
Examples:
  # The commit since which /item leaks, each commit installed with npm ci
  leakcheck bisect --good v1.4.0 --bad HEAD -- run --url http://127.0.0.1:3000 --route '/item?id={uuid}' -- node server.js

  # The first version of a dependency whose check leaks, with a Markdown answer for the issue
  leakcheck bisect --package debug --from 2.6.9 --to 3.2.7 --markdown bisect.md -- run --url http://127.0.0.1:3000 --route /log -- node server.cjs

  # A leak in Node itself, over its releases
  leakcheck bisect --node 20.15.0..20.16.0 -- run --url http://127.0.0.1:3000 --route /tick -- node server.mjs";

pub const MCP: &str = "\
Examples:
  # As a coding agent's tool server (stdio)
  leakcheck mcp

  leakcheck mcp --results ./leakcheck-results";

pub const COMPLETIONS: &str = "\
Examples:
  # bash: loaded by bash-completion on the next shell
  leakcheck completions bash > ~/.local/share/bash-completion/completions/leakcheck

  # zsh: a folder on $fpath
  leakcheck completions zsh > ~/.zfunc/_leakcheck

  leakcheck completions fish > ~/.config/fish/completions/leakcheck.fish";

pub const MAN: &str = "\
Examples:
  # Read run's page
  leakcheck man run | man -l -

  # Install every page
  leakcheck man --dir /usr/local/share/man/man1";
