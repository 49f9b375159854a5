export { type LocalS3, type LocalS3Options, startLocalS3 } from "./server.ts";
export { MAX_LENGTH_PARAM } from "./context.ts";
export { type InProcessObjects, inProcessNode } from "./in-process.ts";
