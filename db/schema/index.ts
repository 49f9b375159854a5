// Every table, one file per area. drizzle-kit reads this file to generate migrations.
export * from "./identity.ts";
export * from "./buckets.ts";
export * from "./api-keys.ts";
export * from "./media.ts";
export * from "./jobs.ts";
export * from "./usage.ts";
export * from "./tags.ts";
export * from "./categories.ts";
export * from "./sets.ts";
export * from "./storyboards.ts";
export * from "./search.ts";
export * from "./billing.ts";
export * from "./derivatives.ts";
export * from "./service-credentials.ts";
export * from "./facts.ts";
export * from "./webhooks.ts";
export * from "./audit.ts";
