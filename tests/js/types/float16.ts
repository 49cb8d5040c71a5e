// Type-checked (tsc --strict) with `--lib esnext,dom`, where TypeScript
// declares Float16Array: view()'s TypedArray includes it then (usage.ts is
// checked under es2022, where it does not exist and TypedArray omits it).
import { SafeTensors, type Tensor, type TypedArray } from 'safetensors-nano';

export function halves(buf: ArrayBuffer): number {
  const t: Tensor | undefined = SafeTensors.fromBytes(buf).tensor('h');
  const v: TypedArray | null = t?.view() ?? null;
  const f16: TypedArray = new Float16Array(4);
  if (v instanceof Float16Array) return v[0] + f16[0];
  return v === null ? 0 : v.length;
}
