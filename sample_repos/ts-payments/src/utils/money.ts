export type Currency = "usd" | "eur" | "gbp" | "jpy";

export interface Money {
  readonly amount: number; // integer, minor units (cents)
  readonly currency: Currency;
}

// Currencies without a minor unit: 1 JPY is stored as 1.
const ZERO_DECIMAL = new Set<Currency>(["jpy"]);

export class CurrencyMismatchError extends Error {
  constructor(a: Currency, b: Currency) {
    super(`Cannot combine amounts in ${a} and ${b}`);
    this.name = "CurrencyMismatchError";
  }
}

export function money(amount: number, currency: Currency): Money {
  if (!Number.isInteger(amount)) {
    throw new RangeError(`Money amounts must be integers in minor units, got ${amount}`);
  }
  return { amount, currency };
}

function assertSameCurrency(a: Money, b: Money): void {
  if (a.currency !== b.currency) throw new CurrencyMismatchError(a.currency, b.currency);
}

export function addMoney(a: Money, b: Money): Money {
  assertSameCurrency(a, b);
  return money(a.amount + b.amount, a.currency);
}

export function subtractMoney(a: Money, b: Money): Money {
  assertSameCurrency(a, b);
  return money(a.amount - b.amount, a.currency);
}

/**
 * Multiplies an amount by a (possibly fractional) factor, rounding half to
 * even so that repeated tax computations do not drift upwards.
 */
export function multiplyMoney(m: Money, factor: number): Money {
  const raw = m.amount * factor;
  const floor = Math.floor(raw);
  const diff = raw - floor;
  let rounded: number;
  if (Math.abs(diff - 0.5) < 1e-9) rounded = floor % 2 === 0 ? floor : floor + 1;
  else rounded = Math.round(raw);
  return money(rounded, m.currency);
}

/**
 * Splits an amount into parts proportional to the given weights without
 * losing a cent: leftover minor units go to the first parts.
 */
export function allocate(m: Money, weights: number[]): Money[] {
  const total = weights.reduce((s, w) => s + w, 0);
  if (total <= 0) throw new RangeError("weights must sum to a positive number");
  const parts = weights.map((w) => Math.floor((m.amount * w) / total));
  let remainder = m.amount - parts.reduce((s, p) => s + p, 0);
  for (let i = 0; remainder > 0; i = (i + 1) % parts.length, remainder--) parts[i] += 1;
  return parts.map((p) => money(p, m.currency));
}

export function formatMoney(m: Money, locale = "en-US"): string {
  const divisor = ZERO_DECIMAL.has(m.currency) ? 1 : 100;
  return new Intl.NumberFormat(locale, { style: "currency", currency: m.currency.toUpperCase() }).format(
    m.amount / divisor,
  );
}

export const zero = (currency: Currency): Money => money(0, currency);

export const sumMoney = (items: Money[], currency: Currency): Money =>
  items.reduce((acc, m) => addMoney(acc, m), zero(currency));
