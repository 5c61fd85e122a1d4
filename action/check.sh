#!/usr/bin/env bash
# The action's check step: `leakcheck run` built from the INPUT_* variables
# (see action.yml), its Markdown appended to the job summary and its HTML
# and JSON kept in $RUNNER_TEMP/leakcheck-report for the artifact step.
# Exits with leakcheck's own code: 1 leak or regression, 2 undecided.
set -uo pipefail
out="${RUNNER_TEMP:?RUNNER_TEMP is set by the Actions runner}/leakcheck-report"
mkdir -p "$out"
if [ -n "${INPUT_MERGE:-}" ]; then
  # The merge job: the shards' results into one report and exit code.
  leakcheck report --merge "$INPUT_MERGE" --json "$out/leakcheck.json" \
    --html "$out/leakcheck.html" --markdown "$out/leakcheck.md"
  code=$?
  cat "$out/leakcheck.md" >> "${GITHUB_STEP_SUMMARY:-/dev/null}" 2>/dev/null ||
    echo "### leakcheck could not merge the shards (exit $code): see the step's log" >> "${GITHUB_STEP_SUMMARY:-/dev/null}"
  {
    echo "exit-code=$code"
    echo "json=$out/leakcheck.json"
  } >> "${GITHUB_OUTPUT:-/dev/null}"
  exit "$code"
fi
args=(run --url "${INPUT_URL:?the url input is required}")
[ -n "${INPUT_SHARD:-}" ] && args+=(--shard "$INPUT_SHARD")
for route in ${INPUT_ROUTES:-}; do
  args+=(--route "$route")
done
[ -n "${INPUT_SCENARIO:-}" ] && args+=(--scenario "$INPUT_SCENARIO")
[ -n "${INPUT_MAX_RETAINED:-}" ] && args+=(--max-retained "$INPUT_MAX_RETAINED")
if [ -n "${INPUT_BASELINE:-}" ]; then
  if [ -f "$INPUT_BASELINE" ]; then
    args+=(--baseline "$INPUT_BASELINE")
  else
    echo "::notice::baseline $INPUT_BASELINE does not exist (a first run?): nothing to compare with"
  fi
fi
# Extra arguments and the command are the workflow author's own shell
# words, quotes included.
eval "extra=(${INPUT_ARGS:-})"
eval "command=(${INPUT_COMMAND:?the command input is required})"
args+=("${extra[@]}" --json "$out/leakcheck.json" --html "$out/leakcheck.html"
  --markdown "$out/leakcheck.md" -- "${command[@]}")
leakcheck "${args[@]}"
code=$?
if [ -s "$out/leakcheck.md" ]; then
  cat "$out/leakcheck.md" >> "${GITHUB_STEP_SUMMARY:-/dev/null}"
else
  echo "### leakcheck could not check the server (exit $code): see the step's log" >> "${GITHUB_STEP_SUMMARY:-/dev/null}"
fi
{
  echo "exit-code=$code"
  echo "json=$out/leakcheck.json"
} >> "${GITHUB_OUTPUT:-/dev/null}"
exit "$code"
