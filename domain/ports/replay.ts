/** Signatures already accepted, so a signed request cannot be sent twice (docs/signed-requests.md). */
export interface ReplayStore {
  /** Records `id` for `ttlMs`; false when it was already recorded: the request is a replay. */
  firstUse(id: string, nowMs: number, ttlMs: number): Promise<boolean>;
}
