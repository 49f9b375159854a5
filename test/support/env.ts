/**
 * Which backends this test run uses. `npm test` (test/run.ts) sets these; a bare
 * `bun test some.test.ts` falls back to the embedded backends.
 */
export const testEnv = {
  databaseUrl: process.env.TEST_DATABASE_URL || null,
  redisUrl: process.env.TEST_REDIS_URL || null,
  redisPrefix: process.env.TEST_REDIS_PREFIX || `mtest-${process.pid}`,
  mode: (process.env.TEST_DATABASE_URL ? "services" : "embedded") as "services" | "embedded",
};

export const JWT_SECRET = "test-jwt-secret-that-is-long-enough";
