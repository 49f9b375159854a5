/**
 * Quantities the domain reports as they happen, for the service's metrics. Optional in Deps:
 * code that runs without it (scripts, some tests) simply reports nothing.
 */
export interface Meters {
  /** An upload was confirmed and changed what is stored: its size. */
  uploaded(bytes: number): void;
  /** A download or stream URL was issued for an object of this size (estimated egress). */
  egressIssued(kind: "download" | "stream", bytes: number): void;
}
