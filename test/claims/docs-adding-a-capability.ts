import type { PageClaims } from "./claim.ts";

const TENANCY = "test/hardening/tenancy.test.ts";

export default {
  page: "docs/adding-a-capability.md",
  claims: [
    { says: "caller.orgId (another organization's id is 404, never 403)", by: { file: TENANCY, test: ": B cannot see or touch A" } },
    { says: "The tenancy matrix says how another organization's ids are used against it (each must be 404 and change nothing):", by: { file: TENANCY, test: ": B cannot see or touch A" } },
  ],
} satisfies PageClaims;
