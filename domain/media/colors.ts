import type { ColorName } from "../../contract/facts.ts";

/**
 * Colours as people compare them: CIELAB (D65), where the straight distance between two
 * colours (delta E, CIE76) is about how different they look; 2.3 is the smallest difference
 * most people notice, 10-20 "a similar colour", over 50 "another colour". The dominant colour
 * of every picture is stored in L*a*b*, so a colour filter is a range query on three indexed
 * numbers instead of a conversion per row.
 */
export interface Lab {
  l: number;
  a: number;
  b: number;
}

/** The sRGB colour each name of the `color` filter stands for. */
export const NAMED_COLORS: Record<ColorName, string> = {
  red: "#e02020",
  orange: "#f08020",
  yellow: "#f0d020",
  green: "#30a030",
  teal: "#20a0a0",
  blue: "#2050d0",
  purple: "#8030b0",
  pink: "#f080b0",
  brown: "#805030",
  black: "#101010",
  gray: "#808080",
  white: "#f5f5f5",
};

/** How far (delta E) a colour may be from the one asked for when the caller does not say. */
export const DEFAULT_COLOR_TOLERANCE = 20;

const HEX = /^#?([0-9a-f]{6})$/i;

/** A named colour or `#rrggbb` in L*a*b*; null when it is neither. */
export function labOf(color: string): Lab | null {
  const named = NAMED_COLORS[color.toLowerCase() as ColorName];
  const m = HEX.exec(named ?? color);
  if (!m) return null;
  const n = Number.parseInt(m[1]!, 16);
  return rgbToLab((n >> 16) & 255, (n >> 8) & 255, n & 255);
}

export function rgbToLab(r8: number, g8: number, b8: number): Lab {
  const lin = (c: number) => {
    const v = c / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const [r, g, b] = [lin(r8), lin(g8), lin(b8)];
  // sRGB to XYZ, relative to the D65 white point.
  const x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const y = 0.2126729 * r + 0.7151522 * g + 0.072175 * b;
  const z = (0.0193339 * r + 0.119192 * g + 0.9503041 * b) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  const [fx, fy, fz] = [f(x), f(y), f(z)];
  // "+ 0" makes -0 plain 0 (a grey has a* = b* = 0).
  const round = (v: number) => Math.round(v * 100) / 100 + 0;
  return { l: round(116 * fy - 16), a: round(500 * (fx - fy)), b: round(200 * (fy - fz)) };
}

export const deltaE = (p: Lab, q: Lab) => Math.hypot(p.l - q.l, p.a - q.a, p.b - q.b);
