// Node, from CommonJS: require() of the ES module entry (require(esm)).
const { SafeTensors, serialize } = require('safetensors-nano');

serialize({ w: { dtype: 'F32', shape: [2], data: new Float32Array([1, 2]) } }).then((bytes) => {
  console.log(JSON.stringify([...SafeTensors.fromBytes(bytes).tensor('w').view()]));
});
