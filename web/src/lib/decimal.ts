// Exact decimal arithmetic on scaled integers (BigInt): prices, ticks and
// notionals never go through floating point. A value is `units / 10^scale`.

export type Decimal = { readonly units: bigint; readonly scale: number };

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** Parses '94.73', '-0.5', '2100' (or a JSON number, via its shortest round-trip text); null when not a decimal. */
export function parseDecimal(input: string | number | null | undefined): Decimal | null {
  if (input === null || input === undefined) return null;
  let text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input.trim();
  if (/e/i.test(text)) {
    // Numbers like 1e-7 only come from JSON; expand them exactly.
    const n = Number(text);
    if (!Number.isFinite(n)) return null;
    text = n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
  }
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const frac = m[3] ?? '';
  const units = BigInt(m[2] + frac) * (m[1] === '-' ? -1n : 1n);
  return normalize({ units, scale: frac.length });
}

/** Like parseDecimal, for values known to be valid (server data, constants). */
export function dec(input: string | number): Decimal {
  const d = parseDecimal(input);
  if (!d) throw new Error(`not a decimal: ${String(input)}`);
  return d;
}

function normalize(d: Decimal): Decimal {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return { units, scale };
}

function rescale(d: Decimal, scale: number): bigint {
  return d.units * 10n ** BigInt(scale - d.scale);
}

function aligned(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [rescale(a, scale), rescale(b, scale), scale];
}

export function add(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = aligned(a, b);
  return normalize({ units: x + y, scale });
}

export function sub(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = aligned(a, b);
  return normalize({ units: x - y, scale });
}

export function mul(a: Decimal, b: Decimal): Decimal {
  return normalize({ units: a.units * b.units, scale: a.scale + b.scale });
}

export function cmp(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function eq(a: Decimal, b: Decimal): boolean {
  return cmp(a, b) === 0;
}

/** ⌊a / b⌋ for b > 0. */
export function floorDiv(a: Decimal, b: Decimal): bigint {
  const [x, y] = aligned(a, b);
  const q = x / y;
  return x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q;
}

/** ⌈a / b⌉ for b > 0. */
export function ceilDiv(a: Decimal, b: Decimal): bigint {
  return -floorDiv({ units: -a.units, scale: a.scale }, b);
}

export function times(a: Decimal, n: bigint | number): Decimal {
  return normalize({ units: a.units * BigInt(n), scale: a.scale });
}

/** True when `price` is a whole number of ticks. */
export function onTick(price: Decimal, tick: Decimal): boolean {
  const [x, y] = aligned(price, tick);
  return y !== 0n && x % y === 0n;
}

/** `price + n × tick`. */
export function addTicks(price: Decimal, tick: Decimal, n: number | bigint): Decimal {
  return add(price, times(tick, n));
}

/** Whole ticks from `low` to `high` (assumes both on the tick). */
export function ticksBetween(low: Decimal, high: Decimal, tick: Decimal): number {
  return Number(floorDiv(sub(high, low), tick));
}

/** Decimal places of a tick size: 0.005 → 3, 0.25 → 2, 1 → 0. */
export function decimalsOf(tick: Decimal): number {
  return tick.scale;
}

/** Fixed-point text with exactly `places` decimals (rounded half away from zero when it has more). */
export function toFixed(d: Decimal, places: number): string {
  let units: bigint;
  if (d.scale <= places) {
    units = rescale(d, places);
  } else {
    const div = 10n ** BigInt(d.scale - places);
    const q = d.units / div;
    const r = d.units % div;
    const away = (r < 0n ? -r : r) * 2n >= div;
    units = away ? q + (d.units < 0n ? -1n : 1n) : q;
  }
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const frac = digits.slice(digits.length - places);
  return `${negative ? '-' : ''}${whole}${places > 0 ? `.${frac}` : ''}`;
}

/** Plain text without trailing zeros. */
export function toPlain(d: Decimal): string {
  return toFixed(d, d.scale);
}

/** Thousands-grouped text with exactly `places` decimals: 198933 → '198,933.00'. */
export function toGrouped(d: Decimal, places: number): string {
  const [whole = '', frac] = toFixed(d, places).split('.');
  const sign = whole.startsWith('-') ? '-' : '';
  const grouped = whole.replace('-', '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}

/**
 * The JSON number whose text is exactly `d`: the server reads request numbers exactly
 * (serde_json's arbitrary precision) and refuses strings, and a double prints the shortest
 * text that reads back as itself. Null when a double cannot carry `d` exactly (more than
 * 15 significant digits), so nothing rounded is ever sent.
 */
export function toJsonNumber(d: Decimal): number | null {
  const n = Number(toPlain(d));
  const back = parseDecimal(n);
  return back !== null && eq(back, d) ? n : null;
}
