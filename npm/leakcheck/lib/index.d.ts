// Types of the leakcheck JS API and of the result it resolves with (the
// JSON result documented field by field in the repository's schema.json).

export type VerdictKind =
  | 'no-retention' | 'working-set' | 'retention' | 'off-heap-retention' | 'counter-growth'
  | 'collection-growth' | 'allocator-fragmentation' | 'time-growth' | 'memory-exhausted' | 'inconclusive';

export interface Finding { kind: string; message: string }
export interface Figure { metric: string; bytes_per_request: number }
export interface Verdict {
  kind: VerdictKind;
  leak: boolean;
  summary: string;
  action: string;
  figure: Figure;
  findings: Finding[];
  fits: Array<{ metric: string; slope_bytes_per_request: number; trend: string; noise_bytes: number }>;
}
export interface Sample {
  rss: number; heap_total: number; heap_used: number; external: number; array_buffers: number;
  counters?: Record<string, number | null>;
  served?: number;
}
export interface Holder {
  class: string; name: string; kind: string; holder_class: string; holder_id: number;
  objects: number; new_bytes: number; retained_bytes: number; script: string | null; path_text: string;
}
export interface RouteResult {
  route: string;
  pid: number | null;
  baseline: Sample | null;
  cycles: Array<{ cycle: number; requests: number; responses: number; errors: number; non_2xx: number; units: number; served?: number; after_load: Sample; after_gc: Sample; peak?: { heap_used: number; heap_total: number; rss: number; samples: number; braked?: boolean } }>;
  retained_bytes_per_request: { heap_used: number; external: number; array_buffers: number; rss: number } | null;
  verdict: Verdict | null;
  diagnosis?: { holders: Holder[]; allocation_sites: Array<{ function: string; url: string; line: number; column: number; bytes: number }> };
  /** The memory limits in force, read at the baseline (bytes). */
  limits?: { heap_bytes?: number; cgroup_bytes?: number; stated_bytes?: number };
  /** Present when the target died of memory during this route. */
  exhaustion?: { cause: 'heap-limit' | 'allocation-failed' | 'oom-killed'; units_before_death: number; cycles_completed: number; exit: string; last_output: string[] };
}
export interface RunResult {
  schema_version: number;
  leakcheck_version: string;
  target: { command: string[]; pid: number | null; probe: 'inspector' | 'endpoints' | 'proc' | null; node_version: string | null; url: string };
  settings: { cycles: number; requests_per_cycle: number; connections: number; routes: string[]; unit: 'request' | 'iteration' | 'call' };
  routes: RouteResult[];
  outcome: { status: 'complete' | 'interrupted' | 'failed'; error: string | null };
}

/**
 * The options of `check`. Unknown names are refused at run time with a
 * `TypeError` naming the closest known option (`diagnoze` → `diagnose`),
 * and so are values of the wrong type (`command` must be an array).
 */
export interface CheckOptions {
  /** Base URL the server listens on (loopback). */
  url: string;
  routes?: string | string[];
  /** The server's command line; leakcheck starts and stops it. */
  command?: string[];
  cycles?: number;
  /** Requests (or scenario iterations) per cycle. */
  requests?: number | string;
  connections?: number;
  method?: string;
  headers?: string[];
  body?: string;
  scenario?: string;
  abort?: number;
  loadCmd?: string;
  /** `--max-retained`: bytes per request (a number) or a size such as '0.1KB'. */
  maxRetained?: number | string;
  /**
   * `--resolution`: the smallest leak per request that must not pass as
   * clean (default 15.7 B, what 3 × 20 000 requests resolve); fixed cycles
   * too small to see it read `inconclusive`.
   */
  resolution?: number | string;
  /** `--heap-limit`: a launched Node target's heap (old space), e.g. '512MB'. */
  heapLimit?: number | string;
  /** `--memory-limit`: the production container's limit the load's peak is held against. */
  memoryLimit?: number | string;
  /** `--max-peak`: fail when the load's peak rss passes this size. */
  maxPeak?: number | string;
  timeout?: string;
  counters?: string[];
  html?: string;
  markdown?: string;
  baseline?: string;
  snapshots?: string;
  inspect?: string;
  pid?: number;
  diagnose?: boolean;
  fresh?: boolean;
  /** No progress on stderr. */
  quiet?: boolean;
  /** Further flags, passed as they are. */
  args?: string[];
}

export interface CheckError extends Error { exitCode: number | null; result?: RunResult }

/** Runs `leakcheck run`; resolves on exit 0 or 1, rejects (CheckError) on exit 2. */
/** Rejects with a `TypeError` for an unknown option or a value of the wrong type. */
export function check(options: CheckOptions): Promise<RunResult>;
/** Throws an AssertionError naming the verdict and the holder when a route leaks. */
export function assertNoLeak(result: RunResult, options?: { maxRetainedPerRequest?: number }): void;
export function runArgs(options: CheckOptions): string[];
export function findBinary(): string;
declare const api: { check: typeof check; assertNoLeak: typeof assertNoLeak; runArgs: typeof runArgs; findBinary: typeof findBinary };
export default api;

/** The options of `checkFunction` (`leakcheck fn`'s flags). */
export interface CheckFunctionOptions {
  /** `auto` (the default) or a number of fixed cycles. */
  cycles?: number | 'auto';
  /** Calls per cycle. */
  calls?: number;
  maxCalls?: number;
  /** Calls in flight at once (default 1). */
  concurrency?: number;
  /** How long one call may take (`10s`, `500ms`). */
  timeout?: string;
  resolution?: string | number;
  maxRetained?: string | number;
  /** Exports of the module run once before and after the check; the
   * setup's value is every call's argument. */
  setup?: string;
  teardown?: string;
  snapshots?: string;
  /** false: no heap snapshots to name the holder. */
  diagnose?: boolean;
  /** false: leakcheck's progress on stderr (quiet by default). */
  quiet?: boolean;
  /** Resolve with the result on a leak instead of rejecting. */
  allowLeak?: boolean;
  /** Node flags of the harness's process (a TypeScript loader). */
  nodeFlags?: string[];
}

/**
 * Checks a function for leaks in a Node process of its own: a function of
 * the calling test file (its module is loaded there, the runner's API
 * replaced by stand-ins), or a module's export. Resolves with the result;
 * rejects on a leak with the holder in the message (unless `allowLeak`),
 * and on an error or an inconclusive check.
 */
export function checkFunction(
  fn: ((arg?: unknown) => unknown) | { module: string; export?: string },
  options?: CheckFunctionOptions,
): Promise<RunResult>;
