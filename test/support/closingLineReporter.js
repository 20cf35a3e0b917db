/**
 * Ends a jest run with one plain line, `<label>: N passed, N failed, N skipped`, which CI reads to know how many tests
 * ran (jest's own "Tests: N passed, N total" is not a line it reads). Used by both jest configs.
 */
const fs = require('node:fs');

class ClosingLineReporter {
  constructor(_globalConfig, options = {}) {
    this.label = options.label ?? 'tests';
  }

  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${this.label}: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped`;
    // jest prints its own summary after every custom reporter; written at exit, this line comes last.
    process.once('exit', () => fs.writeSync(1, `\n${line}\n`));
  }
}

module.exports = ClosingLineReporter;
