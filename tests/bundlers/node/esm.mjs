// Node, as an ES module: the package loads with no setup.
import { SafeTensors, serialize } from 'safetensors-nano';

const bytes = await serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } });
console.log(JSON.stringify([...SafeTensors.fromBytes(bytes).tensor('w').view()]));
