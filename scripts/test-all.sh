#!/usr/bin/env bash
# The README's test command (`npm test`): every jest project (unit, workflow, sandbox, e2e on both n8n versions),
# in one run, then one line "N passed, M failed" with the totals, also written to test-output/summary.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/node24.sh
mkdir -p test-output
rm -f test-output/jest.json test-output/summary.txt
# One test file at a time (the real-n8n suites must not overlap), in one worker process that jest replaces when
# it has grown past 2 GB: in one process, every file's fresh copy of n8n-core adds up, and the whole suite ran
# out of heap (4 GB) once.
npx jest --maxWorkers=1 --workerIdleMemoryLimit=2GB --json --outputFile=test-output/jest.json "$@"
status=$?
node -e '
  const fs = require("fs");
  let r = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTotalTests: 0, success: false };
  try { r = JSON.parse(fs.readFileSync("test-output/jest.json", "utf8")); } catch {}
  // A suite that failed to load counts as a failure even though it has no test results.
  const broken = (r.testResults || []).filter((s) => s.status === "failed" && (s.assertionResults || []).length === 0).length;
  const line = `${r.numPassedTests} passed, ${r.numFailedTests + broken} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : "");
  fs.writeFileSync("test-output/summary.txt", line + "\n");
  console.log(line);
'
[ "$(cut -d' ' -f1 test-output/summary.txt)" != "0" ] || { echo "no test ran" >&2; status=1; }
exit $status
