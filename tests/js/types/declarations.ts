// The declarations against the code (scripts/check-declarations.mjs copies the code, without
// the hand-written .d.ts files, to target/declarations/code/). Each line fails to compile when
// the two disagree, and the error names what disagrees:
// - an exported value, or a member of a class or of an object the API returns, on one side only;
// - a function or method whose parameter count differs (optional ones included);
// - a function or method whose code returns what its declaration does not allow. The code is
//   plain JS: tsc infers a return type from the body or reads a JSDoc `@returns`; where it can
//   do neither (any), and for parameter types, which the code does not state, the check is
//   blind.

import type * as DeclaredMain from '../../../wasm/js/index.js';
import type * as DeclaredFacts from '../../../wasm/js/facts.js';
import type * as DeclaredWebgpu from '../../../wasm/js/webgpu/index.js';
import type * as CodeMain from '../../../target/declarations/code/index.js';
import type * as CodeNode from '../../../target/declarations/code/node.js';
import type * as CodeFacts from '../../../target/declarations/code/facts.js';
import type * as CodeWebgpu from '../../../target/declarations/code/webgpu/index.js';
import type { Tensor as CodeTensor } from '../../../target/declarations/code/read/tensor.js';

/** The names of a module's values (its types are the declarations' own). */
type ValueNames<M> = keyof M & string;
type Equal<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
/** Compiles only when T is empty; the error names what T holds. */
type None<T extends never> = T;
/** The names a class's instances have that the other side lacks. */
type MissingMembers<Declared, Code> = Exclude<keyof Declared, keyof Code>;

type AnyFunction = (...args: never[]) => unknown;
/** How many parameters a function takes, optional ones included (`number` with a rest). */
type ParamCount<F> = F extends (...args: infer P) => unknown ? Required<P>['length'] : never;
/** The names of the functions on both sides whose parameter counts differ. */
type CountMismatches<D, C> = {
  [K in keyof D & keyof C]: D[K] extends AnyFunction
    ? Equal<ParamCount<D[K]>, ParamCount<C[K]>> extends true
      ? never
      : K
    : never;
}[keyof D & keyof C];
/** The names of the functions on both sides whose code returns what the declaration does not allow. */
type ReturnMismatches<D, C> = {
  [K in keyof D & keyof C]: D[K] extends (...args: never[]) => infer Declared
    ? C[K] extends (...args: never[]) => infer Code
      ? [Code] extends [Declared]
        ? never
        : K
      : K
    : never;
}[keyof D & keyof C];
/** Every disagreement of signatures between two sides: none, when they agree. */
type Mismatches<D, C> = CountMismatches<D, C> | ReturnMismatches<D, C>;

// Node's entry adds writeFile and writeShards (declared in index.d.ts for both entries).
type NodeOnly = 'writeFile' | 'writeShards';

// What the API returns, as the code builds it (the declarations name these interfaces).
type CodeHubModel = Awaited<ReturnType<typeof CodeMain.openHub>>;

export type Checks = [
  Expect<Equal<ValueNames<typeof DeclaredMain>, ValueNames<typeof CodeMain> | NodeOnly>>,
  Expect<Equal<ValueNames<typeof DeclaredMain>, ValueNames<typeof CodeNode>>>,
  Expect<Equal<ValueNames<typeof DeclaredFacts>, ValueNames<typeof CodeFacts>>>,
  Expect<Equal<ValueNames<typeof DeclaredWebgpu>, ValueNames<typeof CodeWebgpu>>>,
  None<MissingMembers<DeclaredMain.SafeTensors, CodeMain.SafeTensors>>,
  None<MissingMembers<DeclaredMain.ShardedModel, CodeMain.ShardedModel>>,
  None<MissingMembers<DeclaredMain.SafeTensorsError, CodeMain.SafeTensorsError>>,
  None<MissingMembers<typeof DeclaredMain.SafeTensors, typeof CodeMain.SafeTensors>>,
  None<MissingMembers<DeclaredMain.Tensor, CodeTensor>>,
  None<MissingMembers<DeclaredMain.HubModel, CodeHubModel>>,
  // Signatures: the entries' functions, then each class's statics and methods.
  None<Mismatches<typeof DeclaredMain, typeof CodeMain>>,
  None<Mismatches<typeof DeclaredMain, typeof CodeNode>>,
  None<Mismatches<typeof DeclaredFacts, typeof CodeFacts>>,
  None<Mismatches<typeof DeclaredWebgpu, typeof CodeWebgpu>>,
  None<Mismatches<typeof DeclaredMain.SafeTensors, typeof CodeMain.SafeTensors>>,
  None<Mismatches<DeclaredMain.SafeTensors, CodeMain.SafeTensors>>,
  None<Mismatches<DeclaredMain.ShardedModel, CodeMain.ShardedModel>>,
  None<Mismatches<DeclaredMain.SafeTensorsError, CodeMain.SafeTensorsError>>,
  None<Mismatches<DeclaredMain.Tensor, CodeTensor>>,
  None<Mismatches<DeclaredMain.HubModel, CodeHubModel>>,
];
