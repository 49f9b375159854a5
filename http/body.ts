import { AppError, errors } from "../domain/core/errors.ts";

/**
 * Reads a request body as text, refusing more than `maxBytes` with 413 before buffering
 * it all. The content type is not insisted on: `curl -d` sends form encoding by default.
 */
export async function readBody(request: Request, maxBytes: number): Promise<string> {
  return Buffer.from(await readBodyBytes(request, maxBytes)).toString("utf8");
}

/** The body's bytes, with the same limit (a signed request's digest is over the exact bytes). */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export async function readJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const text = await readBody(request, maxBytes);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.badRequest("Malformed JSON body");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw errors.validation([{ path: "", message: "The body must be a JSON object" }]);
  }
  return value as Record<string, unknown>;
}

function tooLarge(maxBytes: number): AppError {
  return new AppError("payload_too_large", `The request body exceeds ${maxBytes} bytes`);
}
