/** A tiny REST client for tests: real HTTP, JSON in and out. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
  ) {}

  withToken(token: string | null): Api {
    return new Api(this.baseUrl, token);
  }

  async call<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.token) h.authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      h["content-type"] ??= "application/json";
      payload = typeof body === "string" ? body : JSON.stringify(body);
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers: h, body: payload, redirect: "manual" });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>("GET", path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>("POST", path, body ?? {}, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.call<T>("PUT", path, body ?? {}, headers);
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.call<T>("DELETE", path, undefined, headers);
  }
}
