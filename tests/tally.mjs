// The Node checks' tally: each check passes or fails (a failure is printed
// with what and why), and the run ends with the closing line CI reads,
// `N passed, N failed`, and exit status 1 when anything failed.

let passed = 0;
let failed = 0;

/** Counts one check; a failure is printed with what failed and why. */
export function record(ok, what, detail) {
  if (ok) passed += 1;
  else {
    failed += 1;
    console.log(`FAIL ${what}${detail ? `: ${detail}` : ""}`);
  }
}

/** Prints the closing line and ends the process with the run's status. */
export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
