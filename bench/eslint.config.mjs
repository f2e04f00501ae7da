// The tools' lint rules: see tools/eslint.config.mjs.
export { default } from '../tools/eslint.config.mjs';
