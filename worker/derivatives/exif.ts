/**
 * The few EXIF facts worth showing (camera, lens, exposure, time taken, where), read from the
 * raw EXIF block sharp hands over. The position is shown to the organization in `info`;
 * whether it travels on in renders is the organization's setting (stripLocation).
 */
export interface BasicExif {
  make?: string;
  model?: string;
  software?: string;
  lensMake?: string;
  lensModel?: string;
  /** Local time the photo was taken, ISO-8601 without zone unless the camera recorded one. */
  takenAt?: string;
  /** Seconds. */
  exposureTime?: number;
  fNumber?: number;
  iso?: number;
  /** Millimetres. */
  focalLength?: number;
  focalLength35mm?: number;
  gps?: GpsPosition;
}

export interface GpsPosition {
  /** Decimal degrees, north positive. */
  latitude: number;
  /** Decimal degrees, east positive. */
  longitude: number;
  /** Metres above sea level. */
  altitude?: number;
}

const IFD0 = { 0x010f: "make", 0x0110: "model", 0x0131: "software" } as const;
const EXIF_POINTER = 0x8769;
const GPS_POINTER = 0x8825;
const GPS = { latRef: 0x0001, lat: 0x0002, lonRef: 0x0003, lon: 0x0004, altRef: 0x0005, alt: 0x0006 } as const;
const EXIF_TAGS = {
  0x829a: "exposureTime",
  0x829d: "fNumber",
  0x8827: "iso",
  0x920a: "focalLength",
  0xa405: "focalLength35mm",
  0xa433: "lensMake",
  0xa434: "lensModel",
} as const;
const DATE_TAKEN = 0x9003;
const DATE_OFFSET = 0x9011;
const DATE_FALLBACK = 0x0132;

const TYPE_SIZES: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8 };
const MAX_ENTRIES = 512;

type Value = string | number | number[] | undefined;

/** Never throws: a malformed block yields whatever could be read before the damage. */
export function parseExif(block: Uint8Array | undefined | null): BasicExif {
  if (!block || block.byteLength < 14) return {};
  const start = latin1(block, 0, 6) === "Exif\0\0" ? 6 : 0;
  const view = new DataView(block.buffer, block.byteOffset + start, block.byteLength - start);
  const order = latin1(block, start, 2);
  if (order !== "II" && order !== "MM") return {};
  const little = order === "II";
  const out: BasicExif = {};
  try {
    if (view.getUint16(2, little) !== 42) return {};
    const ifd0 = readIfd(view, view.getUint32(4, little), little);
    for (const [tag, key] of Object.entries(IFD0)) setString(out, key as keyof BasicExif, ifd0.get(Number(tag)));
    const exifOffset = ifd0.get(EXIF_POINTER);
    const exif = typeof exifOffset === "number" ? readIfd(view, exifOffset, little) : new Map<number, Value>();
    for (const [tag, key] of Object.entries(EXIF_TAGS)) {
      const v = exif.get(Number(tag));
      if (typeof v === "number" && Number.isFinite(v) && v > 0) (out as Record<string, unknown>)[key] = round(v);
      else setString(out, key as keyof BasicExif, v);
    }
    const taken = isoDate(exif.get(DATE_TAKEN) ?? ifd0.get(DATE_FALLBACK), exif.get(DATE_OFFSET));
    if (taken) out.takenAt = taken;
    const gpsOffset = ifd0.get(GPS_POINTER);
    if (typeof gpsOffset === "number") {
      const gps = position(readIfd(view, gpsOffset, little));
      if (gps) out.gps = gps;
    }
  } catch {
    // A block cut short: keep what was read.
  }
  return out;
}

function readIfd(view: DataView, offset: number, little: boolean): Map<number, Value> {
  const entries = new Map<number, Value>();
  const count = Math.min(view.getUint16(offset, little), MAX_ENTRIES);
  for (let i = 0; i < count; i++) {
    const at = offset + 2 + i * 12;
    if (at + 12 > view.byteLength) break;
    const tag = view.getUint16(at, little);
    const type = view.getUint16(at + 2, little);
    const n = view.getUint32(at + 4, little);
    const size = (TYPE_SIZES[type] ?? 0) * n;
    if (size === 0) continue;
    const data = size <= 4 ? at + 8 : view.getUint32(at + 8, little);
    if (data + size > view.byteLength) continue;
    entries.set(tag, readValue(view, type, data, n, little));
  }
  return entries;
}

/** Degrees, minutes and seconds with their N/S or E/W reference, as signed decimal degrees. */
function degrees(dms: Value, ref: Value): number | null {
  if (!Array.isArray(dms) || dms.length < 1) return null;
  const [d = 0, m = 0, s = 0] = dms;
  const value = d + m / 60 + s / 3600;
  if (!Number.isFinite(value)) return null;
  return Math.round((ref === "S" || ref === "W" ? -value : value) * 1e6) / 1e6;
}

function position(gps: Map<number, Value>): GpsPosition | undefined {
  const latitude = degrees(gps.get(GPS.lat), gps.get(GPS.latRef));
  const longitude = degrees(gps.get(GPS.lon), gps.get(GPS.lonRef));
  if (latitude === null || longitude === null || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return undefined;
  // A camera without a fix writes zeros.
  if (latitude === 0 && longitude === 0) return undefined;
  const out: GpsPosition = { latitude, longitude };
  const alt = gps.get(GPS.alt);
  if (typeof alt === "number" && Number.isFinite(alt)) out.altitude = Math.round((gps.get(GPS.altRef) === 1 ? -alt : alt) * 10) / 10;
  return out;
}

function readValue(view: DataView, type: number, at: number, n: number, little: boolean): Value {
  // Rationals in threes are degrees, minutes, seconds (GPS).
  if ((type === 5 || type === 10) && n > 1 && n <= 4) {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = readValue(view, type, at + i * 8, 1, little);
      out.push(typeof v === "number" ? v : 0);
    }
    return out;
  }
  switch (type) {
    case 2: {
      let s = "";
      for (let i = 0; i < Math.min(n, 256); i++) {
        const c = view.getUint8(at + i);
        if (c === 0) break;
        s += String.fromCharCode(c);
      }
      return s;
    }
    case 1:
      return view.getUint8(at);
    case 7:
      // GPS altitude reference is a byte; other undefined blocks are not read.
      return n === 1 ? view.getUint8(at) : undefined;
    case 3:
      return view.getUint16(at, little);
    case 4:
      return view.getUint32(at, little);
    case 9:
      return view.getInt32(at, little);
    case 5:
    case 10: {
      const read = type === 5 ? view.getUint32.bind(view) : view.getInt32.bind(view);
      const den = read(at + 4, little);
      return den === 0 ? undefined : read(at, little) / den;
    }
  }
  return undefined;
}

function setString(out: BasicExif, key: keyof BasicExif, v: Value): void {
  if (typeof v !== "string") return;
  const s = v.replace(/[^\x20-\x7e\u00a0-\u00ff]/g, "").trim().slice(0, 128);
  if (s) (out as Record<string, unknown>)[key] = s;
}

/** "2024:05:01 12:30:00" (+ "+02:00") to "2024-05-01T12:30:00+02:00". */
function isoDate(date: Value, offset: Value): string | undefined {
  if (typeof date !== "string") return undefined;
  const m = /^(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(date);
  if (!m || m[1] === "0000") return undefined;
  const zone = typeof offset === "string" && /^[+-]\d{2}:\d{2}$/.test(offset.trim()) ? offset.trim() : "";
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${zone}`;
}

const round = (v: number) => (v < 1 ? Number(v.toPrecision(4)) : Math.round(v * 100) / 100);

function latin1(bytes: Uint8Array, at: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(at, at + length));
}
