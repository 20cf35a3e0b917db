/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  // Type checking is `npm run typecheck`; tests transpile only, which keeps the suite fast.
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
};

module.exports = {
  // A global option in jest 29: it applies to every project, and jest warns "Unknown option" when a project sets it.
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/closingLineReporter.js'],
  projects: [
    {
      ...common,
      displayName: 'default',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/http-mongo/'],
    },
    // The whole HTTP suite again, unchanged, with the read models on the MongoDB adapter over the driver stand-in
    // (test/http-mongo/setup.ts); `npm run test:mongo` runs this project alone.
    {
      ...common,
      displayName: 'http-mongo',
      testMatch: ['<rootDir>/test/http/**/*.test.ts', '<rootDir>/test/http-mongo/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/http-mongo/setup.ts'],
    },
  ],
};
