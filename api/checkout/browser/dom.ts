// The few browser members the checkout pages use, typed here rather than through TypeScript's "dom"
// lib: the project compiles for Node, and adding "dom" to that program changes Node's own globals
// (fetch bodies, timers) for every file. A small, explicit surface is also easy to audit.

export interface El {
  textContent: string | null;
  className: string;
  hidden: boolean;
  disabled: boolean;
  append(...nodes: (El | string)[]): void;
  replaceChildren(...nodes: (El | string)[]): void;
  setAttribute(name: string, value: string): void;
  addEventListener(type: 'click', listener: () => void): void;
  focus(): void;
}

interface BrowserDocument {
  getElementById(id: string): El | null;
  createElement(tag: string): El;
  title: string;
  hidden: boolean;
}

interface BrowserLocation {
  pathname: string;
  search: string;
  reload(): void;
}

/** An EIP-1193 provider (window.ethereum). */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
  on?(event: string, listener: (value: unknown) => void): void;
  removeListener?(event: string, listener: (value: unknown) => void): void;
}

interface BrowserWindow {
  document: BrowserDocument;
  location: BrowserLocation;
  ethereum?: Eip1193Provider;
}

const browser = globalThis as unknown as BrowserWindow;

export const doc = (): BrowserDocument => browser.document;
export const here = (): BrowserLocation => browser.location;
export const injectedWallet = (): Eip1193Provider | undefined => browser.ethereum;

export interface Props {
  class?: string;
  text?: string;
  href?: string;
  /** data-*, aria-*, role, type and the like. */
  attrs?: Record<string, string>;
  onClick?: () => void;
  disabled?: boolean;
}

/** Builds an element. Text goes in as text (never as HTML), so nothing from the API can inject markup. */
export function h(tag: string, props: Props = {}, ...children: (El | string | false | null | undefined)[]): El {
  const el = doc().createElement(tag);
  if (props.class) el.className = props.class;
  if (props.text !== undefined) el.textContent = props.text;
  if (props.href !== undefined) el.setAttribute('href', props.href);
  for (const [name, value] of Object.entries(props.attrs ?? {})) el.setAttribute(name, value);
  if (props.onClick) el.addEventListener('click', props.onClick);
  if (props.disabled) el.disabled = true;
  const kept = children.filter((child): child is El | string => child !== false && child !== null && child !== undefined);
  if (kept.length) el.append(...kept);
  return el;
}
