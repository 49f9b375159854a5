/** Samples of a Prometheus text exposition, by name and labels. */
export interface Scrape {
  /** The value of the one sample whose labels include `labels`; 0 when there is none. */
  value(name: string, labels?: Record<string, string>): number;
  /** Every sample of a metric. */
  samples(name: string): { labels: Record<string, string>; value: number }[];
  text: string;
}

export function parseMetrics(text: string): Scrape {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of m[2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[l[1]!] = l[2]!.replace(/\\(.)/g, "$1");
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const matching = (name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    text,
    samples: (name) => samples.filter((s) => s.name === name).map(({ labels, value }) => ({ labels, value })),
    value(name, labels = {}) {
      const found = matching(name, labels);
      if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
      return found[0]?.value ?? 0;
    },
  };
}
