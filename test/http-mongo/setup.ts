/**
 * Setup of the jest project `http-mongo`: every test file of test/http/ runs again, unchanged, with the service's
 * read models on the MongoDB adapter over the driver stand-in (src/infra/readmodel/createReadModel.ts reads this in
 * bootstrap; jest gives each test file its own copy of process.env, so the default project never sees it).
 */
process.env.TEST_READ_MODEL = 'mongodb-standin';
process.env.NODE_ENV = 'test';
