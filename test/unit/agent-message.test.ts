import { describe, expect, test } from "bun:test";
import { AppError, errors } from "../../domain/core/errors.ts";
import { agentMessage } from "../../tools/failure.ts";

describe("agentMessage: what an agent reads first", () => {
  test("a rate limit says how many seconds to wait, since the agent never sees Retry-After", () => {
    const err = new AppError("rate_limited", "An organization may ask for at most 60 set generations an hour; retry after the number of seconds in Retry-After");
    err.retryAfterSeconds = 42;
    expect(agentMessage(err)).toBe("An organization may ask for at most 60 set generations an hour; retry in 42 s");
    const plain = new AppError("rate_limited", "Too many uploads at once");
    plain.retryAfterSeconds = 3;
    expect(agentMessage(plain)).toBe("Too many uploads at once; retry in 3 s");
  });

  test("a validation error leads with the field and what to send", () => {
    const err = errors.validation([{ path: "name", message: "Too short" }, { path: "x", message: "Unknown" }]);
    expect(agentMessage(err, (p) => (p === "name" ? "a bucket name" : undefined))).toBe("name: Too short; send a bucket name; 1 more in details");
  });
});
