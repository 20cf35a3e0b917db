// @ts-check
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { noPlainObjectLookup } from './scripts/eslint/noPlainObjectLookup.mjs';

// Layering and import cycles of src/ are checked by test/unit/layering.test.ts, so no import plugin here.
// Formatting is prettier's job (`npm run format`); eslint-config-prettier turns off every rule that would fight it.
export default defineConfig(
  { ignores: ['dist/', 'data/', 'coverage/', 'bench/results/', 'test/e2e/artifacts/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.strictTypeChecked, tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    // The project's own rules (scripts/eslint/), switched on below where they apply.
    plugins: { local: { rules: { 'no-plain-object-lookup': noPlainObjectLookup } } },
    rules: {
      // Adapters over synchronous stores (better-sqlite3) implement async ports; `async` keeps a throw a rejection.
      '@typescript-eslint/require-await': 'off',
      // `return next()` in a void function is the express idiom, as `() => void call()` shorthands are in callbacks.
      '@typescript-eslint/no-confusing-void-expression': [
        'error',
        { ignoreArrowShorthand: true, ignoreVoidReturningFunctions: true },
      ],
      // Numbers (and bigint positions) print unambiguously in messages, ids and SQL fragments.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // `||` on strings and numbers is deliberate: Girder treats '' and 0 as "not given" in many parameters.
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignorePrimitives: { string: true, number: true } }],
      // It asks for `x!` where `x as T` drops null, which no-non-null-assertion forbids: the two cannot both hold.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
      // Optional adapters (KurrentDB, GridFS) and CLI commands are loaded lazily with require(), on purpose.
      '@typescript-eslint/no-require-imports': 'off',
      // Row and document decoders are typed at the call (`parse<UserDoc>(row)`): the one cast sits in the decoder.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // Documents and records drop fields by computed key (internals, unset fields); they are data, not maps.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // The control-character ranges in regexes here are deliberate: names and headers are cleaned of them.
      'no-control-regex': 'off',
      // A leading underscore marks a binding kept on purpose: express's 4-argument error handler, a dropped key.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Rule 1 of docs/http-conventions.md: no string from outside indexes a plain object (a type-aware local rule).
    files: ['src/**/*.ts'],
    rules: { 'local/no-plain-object-lookup': 'error' },
  },
  {
    // The KurrentDB client's typings are narrower than what its errors carry from raw server metadata (numbers that
    // may be bigints, fields that may be missing): the conversions and checks at this boundary are deliberate.
    files: ['src/infra/eventstore/kurrentdb/mapping.ts'],
    rules: {
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
  {
    // Tests and benchmarks read responses whose bodies are `any` (supertest's res.body, fetched JSON, the driver
    // stand-in's documents) and check their shape with assertions, which fail loudly where these rules would only ask
    // for casts; their request helpers return `any` bodies as supertest does; a `!` on a lookup is one more assertion.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests reach into the adapter a run configured (`readModel as MongoReadModel`) and save prototype methods to
      // wrap them in spies; both are what these rules forbid in product code.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // A generator that throws at once stands in for a stream that fails before its first item.
      'require-yield': 'off',
      // Teardown guards (`api?.close()` after a setup that may have thrown) and conversions of JSON values whose
      // declared types are narrower than what a response may carry are deliberate in tests.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
    },
  },
  {
    // Plain browser script served as is to the Girder web client: no build step, no modules.
    files: ['src/http/web/browser/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        AbortController: 'readonly',
        URLSearchParams: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        TextDecoder: 'readonly',
      },
    },
  },
  {
    // CommonJS configuration for jest and its reporters.
    files: ['*.js', 'test/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        module: 'writable',
        require: 'readonly',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
  },
  prettier,
);
