/**
 * Who owns whom, decided without any stored state, the same way in both directions.
 *
 * The core number of a VAT (see `ids.ts`) is read as `prefix · ABC`: the last three decimal digits
 * are a path in a tree of at most four levels rooted at `prefix · 000`:
 *
 *   prefix·000 (top) → prefix·A00 → prefix·AB0 → prefix·ABC
 *
 * A node may have children only above the last level; how many (0–7) is a hash of the node. A
 * company is linked to its tree parent when its digit is within the parent's child count, and both
 * are registered. So every company knows its company shareholder (at most one from the tree) and
 * its subsidiaries, the two views agree, and a walk up the shareholders ends after at most three
 * hops. Paths with gaps (`0B0`, `A0C`, …) are standalone companies.
 *
 * Pinned companies (`sandbox.ts`) take part only through their declared `parents`.
 */
import { makeItalianVat } from '../../contract/checksums.ts';
import { coreOfVat, vatOfCore } from '../company-ids.ts';
import { hashMod, Rng, dayBetween } from '../random.ts';
import { PINNED_COMPANIES, pinnedByVat } from './sandbox.ts';

export interface OwnershipLink {
  parent: string;
  child: string;
  /** Percent of the child's capital the parent holds. */
  percent: number;
  /** `YYYY-MM-DD` */
  since: string;
}

/** Most companies exist; a valid VAT number whose hash says so is "not registered" (404). */
export function isRegistered(vat: string): boolean {
  if (pinnedByVat(vat)) return true;
  if (vat === '00000000000') return false;
  return hashMod(`registered:${vat}`, 25) !== 0;
}

/** `count` VAT numbers the emulated register knows, from the 10-digit core `from` upward (bench and test data). */
export function registeredVats(from: number, count: number): string[] {
  const out: string[] = [];
  for (let n = from; out.length < count; n++) {
    const vat = makeItalianVat(String(n).padStart(10, '0'));
    if (isRegistered(vat)) out.push(vat);
  }
  return out;
}

interface TreeNode {
  prefix: number;
  digits: [number, number, number];
  /** 0 top, 1–3 below. */
  level: number;
}

function treeNode(core: number): TreeNode | null {
  const prefix = Math.floor(core / 1000);
  const path = core % 1000;
  const digits: [number, number, number] = [Math.floor(path / 100), Math.floor(path / 10) % 10, path % 10];
  const [a, b, c] = digits;
  let level: number;
  if (a === 0 && b === 0 && c === 0) level = 0;
  else if (a > 0 && b === 0 && c === 0) level = 1;
  else if (a > 0 && b > 0 && c === 0) level = 2;
  else if (a > 0 && b > 0 && c > 0) level = 3;
  else return null;
  return { prefix, digits, level };
}

const coreOf = (n: TreeNode): number => n.prefix * 1000 + n.digits[0] * 100 + n.digits[1] * 10 + n.digits[2];

/** How many children a tree node may have (0–7); none on the last level. */
function childCount(node: TreeNode): number {
  if (node.level >= 3) return 0;
  return hashMod(`children:${coreOf(node)}`, 8);
}

function treeParent(node: TreeNode): TreeNode | null {
  if (node.level === 0) return null;
  const digits: [number, number, number] = [...node.digits];
  digits[node.level - 1] = 0;
  return { prefix: node.prefix, digits, level: node.level - 1 };
}

function linkDetails(parent: string, child: string): OwnershipLink {
  const rng = new Rng(`link:${child}`);
  const percent = rng.weighted<number>([
    [100, 45],
    [rng.int(51, 99), 40],
    [rng.int(20, 49), 15],
  ]);
  return { parent, child, percent, since: dayBetween(rng, 2000, 2023) };
}

/** The tree parent link of a non-pinned company, if any. */
function treeParentLink(vat: string): OwnershipLink | null {
  const node = treeNode(coreOfVat(vat));
  if (!node) return null;
  const parentNode = treeParent(node);
  if (!parentNode) return null;
  if (node.digits[node.level - 1] > childCount(parentNode)) return null;
  const parentVat = vatOfCore(coreOf(parentNode));
  if (parentVat === vat || pinnedByVat(parentVat) || !isRegistered(parentVat) || !isRegistered(vat)) return null;
  return linkDetails(parentVat, vat);
}

/** The company shareholders of a company. */
export function parentLinks(vat: string): OwnershipLink[] {
  const pinned = pinnedByVat(vat);
  if (pinned) return pinned.parents.map((p) => ({ parent: p.vat, child: vat, percent: p.percent, since: p.since }));
  const link = treeParentLink(vat);
  return link ? [link] : [];
}

/** The companies a company holds shares of. */
export function childLinks(vat: string): OwnershipLink[] {
  const out: OwnershipLink[] = [];
  for (const c of PINNED_COMPANIES) {
    const p = c.parents.find((x) => x.vat === vat);
    if (p) out.push({ parent: vat, child: c.vat, percent: p.percent, since: p.since });
  }
  if (pinnedByVat(vat) || !isRegistered(vat)) return out;
  const node = treeNode(coreOfVat(vat));
  if (!node) return out;
  const count = childCount(node);
  for (let j = 1; j <= count; j++) {
    const digits: [number, number, number] = [...node.digits];
    digits[node.level] = j;
    const childVat = vatOfCore(coreOf({ prefix: node.prefix, digits, level: node.level + 1 }));
    if (pinnedByVat(childVat) || !isRegistered(childVat)) continue;
    out.push(linkDetails(vat, childVat));
  }
  return out;
}

/**
 * The chain of majority company shareholders above a company (nearest first), stopping at the top
 * or after `maxDepth` hops (a guard; chains end after at most three tree hops anyway).
 */
export function ownershipChain(vat: string, maxDepth = 10): string[] {
  const chain: string[] = [];
  const seen = new Set([vat]);
  let current = vat;
  for (let i = 0; i < maxDepth; i++) {
    const parents = parentLinks(current).sort((a, b) => b.percent - a.percent || a.parent.localeCompare(b.parent));
    const next = parents[0]?.parent;
    if (!next || seen.has(next)) break;
    chain.push(next);
    seen.add(next);
    current = next;
  }
  return chain;
}
