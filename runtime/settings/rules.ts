// The rules the settings catalog is made of: zod schemas that take a variable's raw value (a string,
// or undefined when unset) and give the typed value, or refuse it with what is wrong ("must be a
// positive whole number, got "abc""). An empty value counts as unset wherever a rule has a default.
import { z } from 'zod';

/** What a variable's schema is: from the environment's string (or nothing) to its typed value. */
export type Rule<T> = z.ZodType<T, string | undefined>;

class Refused extends Error {}

/** Says what is wrong with a value; the rule turns it into a zod issue. */
export function refuse(message: string): never {
  throw new Refused(message);
}

/** A rule from a plain function of the raw value: `refuse(...)` inside it refuses the value. */
export function rule<T>(read: (raw: string | undefined) => T): Rule<T> {
  return z
    .string()
    .optional()
    .transform((raw, ctx) => {
      try {
        return read(raw);
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
        return z.NEVER;
      }
    });
}

const blank = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/** Text, kept as given (an empty value stays empty); `fallback` when unset. */
export function text(): Rule<string | undefined>;
export function text(fallback: string): Rule<string>;
export function text(fallback?: string): Rule<string | undefined> {
  return rule((raw) => raw ?? fallback);
}

/** One word (no spaces: a claim name, a role); `fallback` when blank. */
export function word(fallback: string): Rule<string> {
  return rule((raw) => {
    if (blank(raw)) return fallback;
    if (/\s/.test(raw)) refuse(`must be one word (no spaces), got "${raw}"`);
    return raw;
  });
}

/** Text that must not be empty when set. */
export function nonEmpty(fallback: string): Rule<string> {
  return rule((raw) => {
    if (raw === undefined) return fallback;
    if (raw.trim() === '') refuse('must not be empty');
    return raw;
  });
}

/** A whole number of at least 1 (Number's reading of it: "0x10" is 16, as it always was). */
export function positiveWhole(fallback: number): Rule<number> {
  return rule((raw) => {
    if (blank(raw)) return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < 1) refuse(`must be a positive whole number, got "${raw}"`);
    return value;
  });
}

/** The long-poll caps' reading: blank (even spaces) is unset; else a whole number of at least 1. */
export function atLeastOne(fallback: number): Rule<number> {
  return rule((raw) => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < 1) refuse(`must be a whole number of at least 1, got "${raw}"`);
    return value;
  });
}

/** A number above 0, fractions allowed (requests per second). */
export function positiveNumber(fallback: number, unit: string): Rule<number> {
  return rule((raw) => {
    if (blank(raw)) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) refuse(`must be a positive number (${unit}), got "${raw}"`);
    return value;
  });
}

/** Milliseconds, 0 or more; unset when blank. */
export function milliseconds(): Rule<number | undefined> {
  return rule((raw) => {
    if (blank(raw)) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) refuse(`must be a number of milliseconds (0 or more), got "${raw}"`);
    return value;
  });
}

/** A TCP port: a whole number from 0 (any free port) to 65535. */
export function port(): Rule<number | undefined>;
export function port(fallback: number): Rule<number>;
export function port(fallback?: number): Rule<number | undefined> {
  return rule((raw) => {
    if (blank(raw)) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0 || value > 65_535) refuse(`must be a port number, got "${raw}"`);
    return value;
  });
}

/** A whole number from `min` to `max`. */
export function wholeBetween(min: number, max: number): Rule<number | undefined>;
export function wholeBetween(min: number, max: number, fallback: number): Rule<number>;
export function wholeBetween(min: number, max: number, fallback?: number): Rule<number | undefined> {
  return rule((raw) => {
    if (blank(raw)) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) refuse(`must be a whole number from ${min} to ${max}, got "${raw}"`);
    return value;
  });
}

/** One of a few words. */
export function oneOf<const W extends readonly string[]>(words: W, fallback: W[number]): Rule<W[number]> {
  return rule((raw) => {
    const value = raw ?? fallback;
    if (!words.includes(value)) refuse(`must be ${words.map((w) => `"${w}"`).join(' or ')}, got "${value}"`);
    return value as W[number];
  });
}

/** On unless "0" or "false" (anything else, or unset, is on). */
export function onUnlessOff(): Rule<boolean> {
  return rule((raw) => !(raw === '0' || raw === 'false'));
}

/** Off unless "1", "true" or "yes" (any case). */
export function offUnlessOn(): Rule<boolean> {
  return rule((raw) => /^(1|true|yes)$/i.test(raw ?? ''));
}

/** Exactly "1" turns it on. */
export function onlyOne(): Rule<boolean> {
  return rule((raw) => raw === '1');
}

/** An http(s) or ws(s) URL: checked for its scheme only. */
export function url(schemes: readonly string[]): Rule<string | undefined> {
  return rule((raw) => {
    if (blank(raw)) return raw;
    if (!schemes.some((s) => raw.startsWith(`${s}://`))) refuse(`must be a ${schemes.join(' or ')} URL, got "${raw}"`);
    return raw;
  });
}

const KEY = /^0x[0-9a-fA-F]{64}$/;

/** One or more private keys, comma-separated; kept as given (the loaders parse them). Never echoed. */
export function privateKeys(): Rule<string | undefined> {
  return rule((raw) => {
    if (blank(raw) || raw.trim() === '') return raw;
    const bad = raw
      .split(',')
      .map((k) => k.trim())
      .findIndex((k) => k !== '' && !KEY.test(k));
    if (bad >= 0) refuse(`must be 32-byte keys as 0x-prefixed hex, separated by commas; entry ${bad + 1} is not`);
    return raw;
  });
}

/** A secret of at least `min` characters when set; never echoed. */
export function secretOfAtLeast(min: number, hint = ''): Rule<string | undefined> {
  return rule((raw) => {
    if (blank(raw)) return undefined;
    if (raw.length < min) refuse(`must be at least ${min} characters${hint}`);
    return raw;
  });
}
