// The sample for bundlers that copy the .wasm files (Vite, webpack, Rollup
// with its assets plugin) and for the plain page: no setup.
import * as stn from 'safetensors-nano';
import { report } from './app.js';

report(stn);
