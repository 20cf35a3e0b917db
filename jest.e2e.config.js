/**
 * End-to-end tests in a real Chromium (`npm run test:e2e`; not part of `npm test`): the service on 127.0.0.1 with
 * the web client at `/`, driven with playwright-core. See docs/web-client.md.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/*.e2e.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  testTimeout: 120000,
  maxWorkers: 1,
  reporters: ['default', ['<rootDir>/test/support/closingLineReporter.js', { label: 'e2e' }]],
};
