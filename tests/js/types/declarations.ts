// The declarations against the code (scripts/check-declarations.mjs copies the code, without
// the hand-written .d.ts files, to target/declarations/code/). Each line fails to compile when
// the two disagree: an exported value, or a member of an exported class, on one side only.

import type * as DeclaredMain from '../../../wasm/js/index.js';
import type * as DeclaredFacts from '../../../wasm/js/facts.js';
import type * as DeclaredWebgpu from '../../../wasm/js/webgpu/index.js';
import type * as CodeMain from '../../../target/declarations/code/index.js';
import type * as CodeNode from '../../../target/declarations/code/node.js';
import type * as CodeFacts from '../../../target/declarations/code/facts.js';
import type * as CodeWebgpu from '../../../target/declarations/code/webgpu/index.js';

/** The names of a module's values (its types are the declarations' own). */
type ValueNames<M> = keyof M & string;
type Equal<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
/** The names a class's instances have that the other side lacks. */
type MissingMembers<Declared, Code> = Exclude<keyof Declared, keyof Code>;

// Node's entry adds writeFile and writeShards (declared in index.d.ts for both entries).
type NodeOnly = 'writeFile' | 'writeShards';

export type Checks = [
  Expect<Equal<ValueNames<typeof DeclaredMain>, ValueNames<typeof CodeMain> | NodeOnly>>,
  Expect<Equal<ValueNames<typeof DeclaredMain>, ValueNames<typeof CodeNode>>>,
  Expect<Equal<ValueNames<typeof DeclaredFacts>, ValueNames<typeof CodeFacts>>>,
  Expect<Equal<ValueNames<typeof DeclaredWebgpu>, ValueNames<typeof CodeWebgpu>>>,
  Expect<Equal<MissingMembers<DeclaredMain.SafeTensors, CodeMain.SafeTensors>, never>>,
  Expect<Equal<MissingMembers<DeclaredMain.ShardedModel, CodeMain.ShardedModel>, never>>,
  Expect<Equal<MissingMembers<DeclaredMain.SafeTensorsError, CodeMain.SafeTensorsError>, never>>,
  Expect<Equal<MissingMembers<typeof DeclaredMain.SafeTensors, typeof CodeMain.SafeTensors>, never>>,
];
